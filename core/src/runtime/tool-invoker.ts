import { asSchema } from "ai";
import { validateSchema } from "../definitions/schema.js";
import { getErrorMessage, PaiError } from "../errors/pai-error.js";
import { toolFailureDetails } from "../errors/tool-failure.js";
import { ToolInvocationError } from "../errors/tool-invocation-error.js";
import { assertPlainKeys, type JsonValue, normalizeJson } from "../json/json-value.js";
import type { ToolOutcome } from "../state/transitions.js";
import type { CapabilityRegistry } from "./capability-bindings.js";
import type {
  AfterToolResultResult,
  RuntimeAgentDefinition,
  RuntimeResolverArgs,
  RuntimeToolDefinition,
  RuntimeToolRegistration,
} from "./definition-shapes.js";
import type { RequestContext } from "./request-context.js";
import { failMarker, isFailMarker, isSuspendMarker, suspendMarker } from "./tool-results.js";

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

/** What one execution of `execute` ended as. */
export type ExecutionResult =
  | { type: "outcome"; outcome: ToolOutcome; output?: JsonValue | undefined }
  | { type: "suspend"; name: string; input: JsonValue };

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

/** Applies `lifecycle.afterToolResult`, which may replace a result. */
export async function applyAfterToolResult(
  agent: RuntimeAgentDefinition,
  input: {
    name: string;
    toolCallId: string;
    input: unknown;
    result: AfterToolResultResult;
    request: RequestContext;
  },
): Promise<AfterToolResultResult> {
  const hook = agent.lifecycle?.afterToolResult;
  if (!hook) return input.result;
  const replaced = await hook({
    ...(await input.request.resolverArgs()),
    name: input.name,
    toolCallId: input.toolCallId,
    input: input.input,
    result: input.result,
  });
  return replaced ?? input.result;
}

/** Marks errors from hooks that must fail the run rather than the tool call. */
export class FatalHookError extends Error {
  constructor(
    readonly hook: string,
    cause: unknown,
  ) {
    super(`${hook} threw: ${getErrorMessage(cause)}`, { cause });
    this.name = "FatalHookError";
  }
}

export type ChildCallEnvironment = {
  request: RequestContext;
  parentContext: unknown;
  agent: RuntimeAgentDefinition;
  capabilities: CapabilityRegistry;
  generateId: () => string;
  baseCtx: Record<string, unknown>;
  signal: AbortSignal;
  onHookFailure: (error: FatalHookError) => void;
};

/**
 * Builds `ctx.tools`: bound, SDK-shaped children whose availability was resolved once for
 * this parent invocation. Each call validates input and output, maps context, acquires
 * capabilities and runs observers; failures reject with `ToolInvocationError`.
 */
export async function buildChildTools(
  parent: RuntimeToolDefinition,
  env: ChildCallEnvironment,
): Promise<Record<string, unknown>> {
  const children: Record<string, unknown> = {};
  const parentArgs = await env.request.resolverArgs();
  const args: RuntimeResolverArgs = { ...parentArgs, runtimeContext: env.parentContext };
  for (const [name, registration] of Object.entries(parent.tools ?? {})) {
    env.signal.throwIfAborted();
    const enabled = await resolveEnabled(registration, args);
    const child = registration.tool;
    const execute = async (rawInput: unknown, options?: { abortSignal?: AbortSignal }) => {
      const toolCallId = `${env.generateId()}`;
      const fail = (message: string, cause?: unknown) =>
        new ToolInvocationError({ toolName: name, toolCallId, message, cause });
      if (!enabled) throw fail(`Tool ${name} is not enabled for this call.`);
      const signal = options?.abortSignal ? AbortSignal.any([env.signal, options.abortSignal]) : env.signal;
      signal.throwIfAborted();
      const parsedInput = await validateSchema(child.config.inputSchema, rawInput);
      if (!parsedInput.success) throw fail(`Invalid input for tool ${name}: ${parsedInput.message}`);
      const context = await resolveToolContext(registration, args);
      const acquired: Array<() => Promise<void>> = [];
      const facades: Record<string, unknown> = {};
      try {
        for (const [alias, capability] of Object.entries(child.capabilities ?? {})) {
          const { facade, done } = await env.capabilities.acquire(capability, {
            scopeKey: env.request.scope.scopeKey,
            threadId: env.request.threadId,
            signal,
          });
          facades[alias] = facade;
          acquired.push(done);
        }
        if (signal.aborted)
          throw fail(`Call of tool ${name} was cancelled before it started.`, signal.reason);
        let result: unknown;
        try {
          result = await child.execute!({
            ...env.baseCtx,
            input: parsedInput.value,
            context,
            capabilities: Object.freeze(facades),
            tools: Object.freeze({}),
            signal,
            entry: { type: "initial" },
            suspendHistory: [],
            thread: { ...(env.baseCtx.thread as object), toolCallId, toolName: name },
            suspend: () => {
              throw new PaiError("UNSUPPORTED_ENTRY", `Child tool ${name} cannot suspend.`);
            },
            fail: (message: string) => failMarker(message),
            data: {
              write: async () => {
                throw new PaiError("UNSUPPORTED_ENTRY", `Child tool ${name} cannot write tool data.`);
              },
              list: async () => [],
            },
          });
        } catch (error) {
          if (ToolInvocationError.isInstance(error)) throw error;
          const mapped = env.agent.mapError?.({ error, toolName: name, toolCallId });
          throw fail(mapped ?? NESTED_TOOL_ERROR_TEXT, error);
        }
        if (isFailMarker(result)) throw fail(toolFailureDetails(result.message).message);
        if (isSuspendMarker(result)) throw fail(`Child tool ${name} cannot suspend.`);
        const settled = await settleOutput(child, name, result);
        if (!settled.ok) throw fail(settled.errorText);
        if (registration.onOutput) {
          try {
            await registration.onOutput({
              ...args,
              input: parsedInput.value,
              output: settled.output,
              tool: { name },
              call: { toolCallId },
            });
          } catch (error) {
            const fatal = new FatalHookError("onOutput", error);
            env.onHookFailure(fatal);
            throw fatal;
          }
        }
        return settled.output;
      } finally {
        for (const done of acquired) await done();
      }
    };
    children[name] = Object.freeze({
      enabled,
      description: typeof child.config.description === "string" ? child.config.description : "",
      inputSchema: child.config.inputSchema,
      ...(child.config.outputSchema ? { outputSchema: child.config.outputSchema } : {}),
      execute,
    });
  }
  return Object.freeze(children);
}

export { failMarker, suspendMarker };
