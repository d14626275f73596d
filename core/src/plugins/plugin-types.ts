import type { CapabilityBinding } from "../runtime/capability-bindings.js";
import type { AfterToolResultResult } from "../runtime/definition-shapes.js";
import type { RuntimeEvent, RuntimeEventType } from "../runtime/runtime-events.js";

/** A tool definition as the plugin system sees it: anything `defineTool` returns. */
export type PluginToolDefinition = { readonly kind: "tool"; readonly id: string };

/** A configured registration of a plugin tool; the same shape agents use. */
export type PluginToolRegistration<TTool extends PluginToolDefinition = PluginToolDefinition> = {
  readonly tool: TTool;
  /** Boolean or resolver; receives the agent's runtime context. Defaults to enabled. */
  readonly enabled?: boolean | ((args: any) => boolean | Promise<boolean>);
  /** Projects the agent's runtime context into the context the tool declared. */
  readonly mapContext?: (args: any) => unknown;
  /** Observes each successful call's settled output. */
  readonly onOutput?: (args: any) => unknown;
};

/** A `tools` entry of `definePlugin`: a bare definition or a configured registration. */
export type PluginToolInput = PluginToolDefinition | PluginToolRegistration;

/** Normalized plugin tools: bare definitions become `{ tool }`, like agent registrations. */
export type NormalizePluginTools<TTools> = {
  readonly [K in keyof TTools]: TTools[K] extends PluginToolDefinition
    ? { readonly tool: TTools[K] }
    : TTools[K];
};

/**
 * Restricts a hook. `toolName` limits it to tool events (and `afterToolResult`) of matching
 * tools; `agentId` to events of matching agents. Absent fields match everything.
 */
export type PluginHookMatcher = {
  toolName?: string | readonly string[] | RegExp | ((toolName: string) => boolean);
  agentId?: string | readonly string[];
};

/** A hook: a handler, or `{ matcher, handler }` to run it only for matching events. */
export type PluginHook<TArgs, TResult = void | Promise<void>> =
  | ((args: TArgs) => TResult)
  | { readonly matcher?: PluginHookMatcher; readonly handler: (args: TArgs) => TResult };

/** The runtime event of one `type`. */
export type RuntimeEventOf<TType extends RuntimeEventType> = Extract<RuntimeEvent, { type: TType }>;

/** What a plugin's `afterToolResult` receives: the agent lifecycle hook's arguments plus the agent id. */
export type PluginAfterToolResultArgs = {
  agentId: string;
  name: string;
  toolCallId: string;
  input: unknown;
  result: AfterToolResultResult;
  runtimeContext: unknown;
  identity: unknown;
  threadId: string;
};

/**
 * Lifecycle hooks of a plugin. `afterToolResult` may replace a top-level tool result (return
 * the replacement, or nothing to keep it) and fails the run when it throws. The `on*` hooks
 * only observe: they run synchronously in event order, are not awaited, and a throw is
 * reported to `onRuntimeError` without affecting the run.
 */
export type PluginHooks = {
  afterToolResult?: PluginHook<
    PluginAfterToolResultArgs,
    AfterToolResultResult | undefined | void | Promise<AfterToolResultResult | undefined | void>
  >;
  onRunStart?: PluginHook<RuntimeEventOf<"run-start">>;
  onRunEnd?: PluginHook<RuntimeEventOf<"run-end">>;
  onStepStart?: PluginHook<RuntimeEventOf<"step-start">>;
  onStepEnd?: PluginHook<RuntimeEventOf<"step-end">>;
  onModelStart?: PluginHook<RuntimeEventOf<"model-start">>;
  onModelEnd?: PluginHook<RuntimeEventOf<"model-end">>;
  onToolStart?: PluginHook<RuntimeEventOf<"tool-start">>;
  onToolEnd?: PluginHook<RuntimeEventOf<"tool-end">>;
  onSuspend?: PluginHook<RuntimeEventOf<"suspend">>;
  onActionResolved?: PluginHook<RuntimeEventOf<"action-resolved">>;
  /** Every runtime event, after the specific hook for it. */
  onEvent?: PluginHook<RuntimeEvent>;
};

/**
 * A plugin: one declarative object contributing tools, capability bindings and hooks.
 * Create it with `definePlugin`; register it with `createPai({ plugins })`.
 */
export type PaiPlugin<TId extends string = string, TTools extends object = {}> = {
  readonly kind: "plugin";
  /** Stable, unique id (a literal); used in error messages and conflicts. */
  readonly id: TId;
  /** Normalized tool registrations added to every agent, or to the agents listed in `agents`. */
  readonly tools: TTools;
  /** Registry ids of the agents that receive `tools`; all agents when absent. */
  readonly agents?: readonly string[];
  /** Capability bindings keyed by capability id, merged with the runtime's own. */
  readonly capabilities: Readonly<Record<string, CapabilityBinding<any>>>;
  readonly hooks: PluginHooks;
};

/** Any plugin, whatever its id and tools. */
export type AnyPaiPlugin = PaiPlugin<string, object>;

type UnionToIntersection<U> = (U extends unknown ? (value: U) => void : never) extends (
  value: infer I,
) => void
  ? I
  : never;

/** The tools a list of plugins contributes, merged into one map. */
export type PluginToolsOf<TPlugins extends readonly AnyPaiPlugin[]> = [TPlugins[number]] extends [never]
  ? {}
  : UnionToIntersection<TPlugins[number]["tools"]>;

/**
 * An agent definition type with the tools its plugins contribute, so their contracts appear
 * in the agent contract clients use: `AgentContractOf<WithPlugins<typeof agent, [typeof plugin]>>`.
 * Plugin tools are added whatever the plugin's `agents` filter says (that list is data).
 */
export type WithPlugins<TAgent, TPlugins extends readonly AnyPaiPlugin[]> = number extends TPlugins["length"]
  ? TAgent // an untyped plugin list (not a tuple) carries no tool types
  : TPlugins extends readonly []
    ? TAgent
    : TAgent extends { readonly tools: infer TTools }
      ? Omit<TAgent, "tools"> & { readonly tools: TTools & PluginToolsOf<TPlugins> }
      : TAgent;
