import type { LanguageModel } from "ai";
import type { RuntimeContextArgs, ToolResolverArgs } from "./resolver-args.js";
import type { ToolSchema } from "./schema.js";
import type { AnyToolDefinition, NormalizedToolRegistration } from "./tool-types.js";

/** A settled tool call result, as lifecycle hooks see it. */
export type ToolCallResult = { type: "output"; output: unknown } | { type: "error"; errorText: string };

/** The parent call of a child tool call (`ctx.tools.<name>(…)` inside a tool). */
export type ParentToolCall = { toolName: string; toolCallId: string };

/** Arguments of `lifecycle.afterToolResult`. */
export type AfterToolResultArgs<TRuntimeContext = unknown> = ToolResolverArgs<TRuntimeContext> & {
  /** Registration name of the tool (for a child call: its name under the parent). */
  toolName: string;
  /** @deprecated Same as `toolName`. */
  name: string;
  toolCallId: string;
  /** Set for a child call: the top-level call that made it. */
  parent?: ParentToolCall;
  input: unknown;
  result: ToolCallResult;
};

/**
 * Agent-wide observer of every settled tool result. Return `undefined` to keep the result,
 * or a replacement (`{ type: "output", output }` / `{ type: "error", errorText }`).
 */
export type AfterToolResultHook<TRuntimeContext = unknown> = (
  args: AfterToolResultArgs<TRuntimeContext>,
) => ToolCallResult | undefined | void | Promise<ToolCallResult | undefined | void>;

/** Agent lifecycle hooks. */
export type AgentLifecycle<TRuntimeContext = unknown> = {
  afterToolResult?: AfterToolResultHook<TRuntimeContext>;
};

/** Projects an unexpected tool exception into the model-visible text; `undefined` keeps the default. */
export type MapToolError = (args: {
  error: unknown;
  toolName: string;
  toolCallId: string;
  /** Set for a child call: the top-level call that made it. */
  parent?: ParentToolCall;
}) => string | undefined;

/**
 * Hooks installed on a runtime (`createPai({ hooks })`) for all of its agents: `afterToolResult`
 * runs before an agent's own, `mapError` answers when an agent's own returns nothing.
 */
export type RuntimeHooks = {
  afterToolResult?: AfterToolResultHook<unknown>;
  mapError?: MapToolError;
};

/** An agent definition, as `defineAgent` returns it (frozen). */
export type AgentDefinition<
  TRuntimeContext = any,
  TTools extends Record<string, AnyToolDefinition> = Record<string, AnyToolDefinition>,
> = {
  readonly kind: "agent";
  readonly name?: string;
  /** Normalized registrations keyed by registration (public tool) name. */
  readonly tools: { readonly [K in keyof TTools]: NormalizedToolRegistration<TTools[K], TRuntimeContext> };
  readonly runtimeContext?: (args: RuntimeContextArgs) => TRuntimeContext | Promise<TRuntimeContext>;
  readonly instructions?: string | ((args: ToolResolverArgs<TRuntimeContext>) => string | Promise<string>);
  /** Optional: the runtime may supply the model instead. */
  readonly model?: LanguageModel;
  readonly maxSteps?: number;
  readonly lifecycle?: AgentLifecycle<TRuntimeContext>;
  readonly mapError?: MapToolError;
  /** Schema of the agent's own message metadata. */
  readonly messageMetadata?: ToolSchema;
};

/** Any agent definition. */
export type AnyAgentDefinition = AgentDefinition<any, any>;
