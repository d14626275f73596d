import { asSchema } from "ai";
import { validateSchema } from "../definitions/schema.js";
import { getErrorMessage } from "../errors/pai-error.js";
import { assertPlainKeys, type JsonValue, normalizeJson } from "../json/json-value.js";
import type {
  RuntimeResolverArgs,
  RuntimeToolDefinition,
  RuntimeToolRegistration,
} from "./definition-shapes.js";

/** Generic text for unexpected exceptions of nested calls (spec: nested calls redact by default). */
export const NESTED_TOOL_ERROR_TEXT = "The tool failed unexpectedly.";

/** Resolves `enabled` for a registration: boolean, or a sync/async resolver. Defaults to enabled. */
export async function resolveEnabled(
  registration: RuntimeToolRegistration,
  args: RuntimeResolverArgs,
): Promise<boolean> {
  const enabled = registration.enabled;
  if (enabled === undefined) return true;
  if (typeof enabled === "boolean") return enabled;
  return Boolean(await enabled(args));
}

/** The tool context a registration hands to `execute`: mapped, or the runtime context itself. */
export async function resolveToolContext(
  registration: RuntimeToolRegistration,
  args: RuntimeResolverArgs,
): Promise<unknown> {
  return registration.mapContext ? await registration.mapContext(args) : args.runtimeContext;
}

/** Resolves a tool's description for one model step. Callback descriptions see mapped context and enabled children. */
export async function resolveDescription(
  registration: RuntimeToolRegistration,
  args: RuntimeResolverArgs,
): Promise<string> {
  const description = registration.tool.config.description;
  if (typeof description === "string") return description;
  const context = await resolveToolContext(registration, args);
  const tools: Record<string, { description: string; inputSchema: unknown; outputSchema?: unknown }> = {};
  for (const [name, child] of Object.entries(registration.tool.tools ?? {})) {
    const childArgs = { ...args, runtimeContext: context };
    if (!(await resolveEnabled(child, childArgs))) continue;
    tools[name] = {
      description: await resolveDescription(child, childArgs),
      inputSchema: asSchema(child.tool.config.inputSchema),
      ...(child.tool.config.outputSchema ? { outputSchema: asSchema(child.tool.config.outputSchema) } : {}),
    };
  }
  return description({ context, tools: Object.freeze(tools) });
}

/** Validates and JSON-normalizes a successful output against the tool's output schema. */
export async function settleOutput(
  tool: RuntimeToolDefinition,
  toolName: string,
  raw: unknown,
): Promise<{ ok: true; output: JsonValue | undefined } | { ok: false; errorText: string }> {
  let value = raw;
  try {
    assertPlainKeys(raw, `Output of tool ${toolName}`);
  } catch (error) {
    return { ok: false, errorText: getErrorMessage(error) };
  }
  if (tool.config.outputSchema) {
    const parsed = await validateSchema(tool.config.outputSchema, raw);
    if (!parsed.success) {
      return {
        ok: false,
        errorText: `Tool ${toolName} produced output that does not match its outputSchema (${parsed.message}).`,
      };
    }
    value = parsed.value;
  }
  if (value === undefined) {
    if (tool.config.toModelOutput) {
      return {
        ok: false,
        errorText: `Tool ${toolName} has toModelOutput and must return a JSON value; return null explicitly when there is nothing to return.`,
      };
    }
    return { ok: true, output: undefined };
  }
  try {
    return { ok: true, output: normalizeJson(value, `Output of tool ${toolName}`) };
  } catch (error) {
    return { ok: false, errorText: getErrorMessage(error) };
  }
}
