import type { LanguageModel } from "ai";
import { PaiError } from "../errors/pai-error.js";
import type { AgentDefinition, AgentLifecycle, MapToolError } from "./agent-types.js";
import { normalizeRegistrations, type ToolRegistrationsInput } from "./registrations.js";
import type { RuntimeContextArgs, ToolResolverArgs } from "./resolver-args.js";
import type { ToolSchema } from "./schema.js";
import type { AnyToolDefinition, NormalizedToolRegistration } from "./tool-types.js";

/** The runtime context callbacks see: `undefined` when the agent declares no `runtimeContext`. */
export type EffectiveRuntimeContext<TContext> = [TContext] extends [never] ? undefined : TContext;

/**
 * The input `defineAgent` accepts. `TCheckContext` is what tool registrations are checked
 * against (the runtime context, or `undefined` without one) and `TContextSource` how their
 * errors name it (`"no runtimeContext"` for an agent without one).
 */
export type DefineAgentConfig<
  TContext,
  TTools extends Record<string, AnyToolDefinition>,
  TCheckContext = TContext,
  TContextSource extends string = "the runtimeContext",
> = {
  name?: string;
  /** Resolves the agent's server-side context for each run/request. */
  runtimeContext?: (args: RuntimeContextArgs) => TContext | Promise<TContext>;
  /**
   * Tool registrations. A tool whose declared context the runtime context does not
   * satisfy must be registered as `{ tool, mapContext }`.
   */
  tools?: ToolRegistrationsInput<TTools, EffectiveRuntimeContext<TContext>, TCheckContext, TContextSource>;
  instructions?:
    | string
    | ((args: ToolResolverArgs<EffectiveRuntimeContext<TContext>>) => string | Promise<string>);
  model?: LanguageModel;
  maxSteps?: number;
  lifecycle?: AgentLifecycle<EffectiveRuntimeContext<TContext>>;
  mapError?: MapToolError;
  messageMetadata?: ToolSchema;
};

function fail(message: string): never {
  throw new PaiError("INVALID_DEFINITION", message);
}

/** Whether a Zod/Standard schema accepts `undefined` (checked synchronously when possible). */
function acceptsUndefined(schema: unknown): boolean {
  const standard = (schema as { "~standard"?: { validate?: (value: unknown) => unknown } })?.["~standard"];
  if (typeof standard?.validate !== "function") return true;
  const result = standard.validate(undefined) as { issues?: unknown } | PromiseLike<unknown>;
  if (result && typeof (result as PromiseLike<unknown>).then === "function") return true;
  return !(result as { issues?: unknown }).issues;
}

/**
 * Defines an agent: tool registrations, runtime context resolver, instructions, lifecycle
 * hooks and optionally a model. `TContext` defaults to `never` on purpose: that keeps the
 * compile-time context check lenient until `runtimeContext` has been inferred. `TKeys` learns
 * whether the config has a `runtimeContext` at all (only that key, so excess-property checks
 * stay on; `"runtimeContext"` until known, which keeps the check lenient). Without one, tools
 * are checked against `undefined`.
 */
export function defineAgent<
  TContext = never,
  TTools extends Record<string, AnyToolDefinition> = {},
  TKeys extends PropertyKey = "runtimeContext",
>(
  config: DefineAgentConfig<
    TContext,
    TTools,
    "runtimeContext" extends TKeys ? TContext : undefined,
    "runtimeContext" extends TKeys ? "the runtimeContext" : "no runtimeContext"
  > & {
    readonly [K in TKeys & "runtimeContext"]?: unknown;
  },
): AgentDefinition<EffectiveRuntimeContext<TContext>, TTools> {
  if (typeof config !== "object" || config === null) fail("defineAgent: expected a config object.");
  const owner = config.name ? `defineAgent("${config.name}")` : "defineAgent";
  if (config.name !== undefined && (typeof config.name !== "string" || config.name.trim() === "")) {
    fail(`${owner}: name must be a non-empty string when present.`);
  }
  for (const key of ["runtimeContext", "mapError"] as const) {
    if (config[key] !== undefined && typeof config[key] !== "function") {
      fail(`${owner}: ${key} must be a function when present.`);
    }
  }
  if (
    config.instructions !== undefined &&
    typeof config.instructions !== "string" &&
    typeof config.instructions !== "function"
  ) {
    fail(`${owner}: instructions must be a string or a function.`);
  }
  if (config.maxSteps !== undefined && (!Number.isInteger(config.maxSteps) || config.maxSteps < 1)) {
    fail(`${owner}: maxSteps must be a positive integer (got ${String(config.maxSteps)}).`);
  }
  const tools = normalizeRegistrations((config.tools ?? {}) as Record<string, unknown>, owner);
  if (config.runtimeContext === undefined) {
    // The type check catches this for literal configs; a config typed loosely (or plain JS)
    // reaches this point, so it is checked here too.
    for (const [name, registration] of Object.entries(tools) as Array<[string, NormalizedToolRegistration]>) {
      const contextSchema = registration.tool.config.contextSchema;
      if (!registration.mapContext && contextSchema !== undefined && !acceptsUndefined(contextSchema)) {
        fail(
          `${owner}: tool "${name}" (id "${registration.tool.id}") declares a contextSchema, but the agent has no runtimeContext. Add a runtimeContext resolver, or register the tool as { tool, mapContext }.`,
        );
      }
    }
  }
  const lifecycle = config.lifecycle ? Object.freeze({ ...config.lifecycle }) : undefined;
  return Object.freeze({
    kind: "agent" as const,
    ...(config.name !== undefined ? { name: config.name } : {}),
    tools,
    ...(config.runtimeContext ? { runtimeContext: config.runtimeContext } : {}),
    ...(config.instructions !== undefined ? { instructions: config.instructions } : {}),
    ...(config.model !== undefined ? { model: config.model } : {}),
    ...(config.maxSteps !== undefined ? { maxSteps: config.maxSteps } : {}),
    ...(lifecycle ? { lifecycle } : {}),
    ...(config.mapError ? { mapError: config.mapError } : {}),
    ...(config.messageMetadata !== undefined ? { messageMetadata: config.messageMetadata } : {}),
  }) as never;
}
