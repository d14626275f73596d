import type { Tool } from "ai";
import type { CapabilityFacades, CapabilityMap } from "../capabilities/capability.js";
import type { ToolFailure } from "../errors/tool-failure.js";
import type { JsonValue } from "../json/json-value.js";
import type { ScopedFiles } from "../ports/files.js";
import type { SuspendOptions, ToolDeadline } from "./deadline.js";
import type { PendingActionRef } from "./pending-action.js";
import type { ToolOutputArgs, ToolResolverArgs } from "./resolver-args.js";
import type { ToolSchema } from "./schema.js";
import type {
  ContractOutput,
  InferSuspendContracts,
  InferToolDataContracts,
  ParsedToolSchema,
  RawToolSchemaInput,
  SuspendMap,
  SuspendName,
  ToolContract,
  ZodToolSchema,
} from "./tool-contract.js";
import type { ToolFailResult, ToolSuspendResult } from "./tool-results.js";

/** Any tool definition, whatever its contract. Use this to accept definitions generically. */
export type AnyToolDefinition = ToolDefinition<any, any, any, any, any>;

/** A registration value: a bare definition or `{ tool, enabled?, mapContext?, onOutput? }`. */
export type ToolRegistrationInput<
  TTool extends AnyToolDefinition = AnyToolDefinition,
  TRuntimeContext = any,
> = TTool | ToolRegistration<TTool, TRuntimeContext>;

/** A map of registrations, as accepted by `tools` of an agent or a tool. */
export type ToolMap = Record<string, ToolRegistrationInput>;

/** The definition inside a registration value. */
export type RegisteredTool<T> = T extends AnyToolDefinition
  ? T
  : T extends { readonly tool: infer TTool extends AnyToolDefinition }
    ? TTool
    : never;

/** Parsed input of a definition (what execute and observers see). */
export type ToolInputOf<TTool> = TTool extends { readonly contract: { input: infer TInput } }
  ? TInput
  : unknown;

/** Parsed output of a definition. */
export type ToolOutputOf<TTool> = TTool extends { readonly contract: { output: infer TOutput } }
  ? TOutput
  : unknown;

/** Context a definition requires (`unknown` when it declares none). */
export type ToolContextOf<TTool> = TTool extends { readonly context: infer TContext } ? TContext : unknown;

/** Availability: a boolean or a side-effect-free, possibly async resolver. */
export type ToolEnabled<TRuntimeContext = any> =
  | boolean
  | ((args: ToolResolverArgs<TRuntimeContext>) => boolean | Promise<boolean>);

/** A configured registration. The same shape is used on agents and for child tools. */
export type ToolRegistration<TTool extends AnyToolDefinition = AnyToolDefinition, TRuntimeContext = any> = {
  tool: TTool;
  /** Defaults to enabled. Resolvers can run repeatedly: keep them idempotent. */
  enabled?: ToolEnabled<TRuntimeContext>;
  /** Projects the runtime context into the context the tool declared. */
  mapContext?: (
    args: ToolResolverArgs<TRuntimeContext>,
  ) => ToolContextOf<TTool> | Promise<ToolContextOf<TTool>>;
  /** Observes the settled output of each successful call. The return value is ignored. */
  onOutput?: (
    args: ToolOutputArgs<TRuntimeContext, ToolInputOf<TTool>, ToolOutputOf<TTool>>,
  ) => void | Promise<void>;
};

/** A registration after normalization: bare definitions become `{ tool }`. */
export type NormalizedToolRegistration<
  TTool extends AnyToolDefinition = AnyToolDefinition,
  TRuntimeContext = any,
> = ToolRegistration<TTool, TRuntimeContext>;

/** Metadata of one enabled child, as a description callback sees it. */
export type ToolDescriptionMetadata<TTool extends AnyToolDefinition = AnyToolDefinition> = {
  readonly description: string;
  readonly inputSchema: TTool["config"]["inputSchema"];
  readonly outputSchema?: ToolSchema;
};

/** Enabled children's metadata; disabled children are absent. */
export type ToolDescriptionMap<TTools> = {
  readonly [K in keyof TTools]?: ToolDescriptionMetadata<RegisteredTool<TTools[K]>>;
};

/** Static text or a synchronous description prepared for each model step. */
export type ToolDescription<TContext = unknown, TTools = {}> =
  | string
  | ((args: { readonly context: TContext; readonly tools: ToolDescriptionMap<TTools> }) => string);

/** AI SDK conversion of a successful result into model-facing content. */
export type ToolModelOutput<TContract extends ToolContract = ToolContract> = (options: {
  toolCallId: string;
  input: TContract["input"];
  output: TContract["output"];
}) => ReturnType<NonNullable<Tool["toModelOutput"]>>;

/** A child tool bound for the duration of one parent invocation (`ctx.tools.<name>`). */
export type BoundChildTool<TTool extends AnyToolDefinition = AnyToolDefinition> = {
  /** Resolved once before the parent's execute; fixed for that invocation. */
  readonly enabled: boolean;
  readonly description?: string;
  /** The child's own input schema (a reference; validation happens inside `execute`). */
  readonly inputSchema: TTool["config"]["inputSchema"];
  readonly outputSchema?: ToolSchema;
  /** Accepts the schema's raw input and resolves to the validated output. Rejects with `ToolInvocationError`. */
  execute(
    input: RawToolSchemaInput<TTool["config"]["inputSchema"]>,
    options?: { abortSignal?: AbortSignal },
  ): Promise<ToolOutputOf<TTool>>;
};

/** `ctx.tools`: typed calls to the tool's own declared children. */
export type ToolCallMap<TTools> = { readonly [K in keyof TTools]: BoundChildTool<RegisteredTool<TTools[K]>> };

/** A resume entry for one suspend point. */
export type ToolResumeEntry<TName extends string, TResume> = {
  /** Re-entry after a pending action was submitted. */
  type: "resume";
  /** Suspend point being resumed. */
  name: TName;
  /** Parsed resume payload from that point's `resumeSchema`. */
  resume: TResume;
  /** Action reference that triggered the resume. */
  action: PendingActionRef;
};

/**
 * Why execute is running: the first call, or re-entry after a pending action was submitted.
 * A tool without suspend points keeps an uninhabitable resume arm (`name: never`) so generic
 * code such as `ctx.entry.type === "resume" ? ctx.entry.action.actionId : ...` still compiles.
 */
export type ToolEntry<TContract extends ToolContract = ToolContract> =
  | {
      /** First execution for this tool call. */
      type: "initial";
    }
  | ([keyof TContract["suspend"] & string] extends [never]
      ? ToolResumeEntry<never, never>
      : {
          [TName in keyof TContract["suspend"] & string]: ToolResumeEntry<
            TName,
            TContract["suspend"][TName]["resume"]
          >;
        }[keyof TContract["suspend"] & string]);

/** One stored tool data item. */
export type ToolDataRecord<TValue = unknown> = { id: string; value: TValue; updatedAt: string };

/** `ctx.data`: typed, tool-scoped progress and renderer state. */
export type ToolDataWriter<TContract extends ToolContract = ToolContract> = {
  /** Write or replace one item. The same id updates in place. `transient` items are live-only. */
  write<TName extends keyof TContract["data"] & string>(
    name: TName,
    value: TContract["data"][TName],
    options?: { id?: string; transient?: boolean },
  ): Promise<void>;
  /** The latest items this call already wrote on a channel. */
  list<TName extends keyof TContract["data"] & string>(
    name: TName,
  ): Promise<Array<ToolDataRecord<TContract["data"][TName]>>>;
};

/** Input of `ctx.trigger`: a server notification that asks the runtime to continue generation. */
export type ToolTriggerInput = {
  notification: string;
  data?: JsonValue;
  /** Hide the notification from the transcript shown to users. */
  hidden?: boolean;
} & (
  | { at?: never; cron?: never; timezone?: never }
  /** Later, once: a schedule on the thread (it survives restarts and fires once). */
  | { at: Date | string; cron?: never; timezone?: never }
  /** On every instant of a five-field cron expression, in `timezone` (default UTC). */
  | { cron: string; timezone?: string; at?: never }
);

/** Input of `ctx.agents.run`: run another registered agent as part of this run. */
export type AgentRunInput = {
  agentId: string;
  prompt: string;
  /** Continue an existing thread of that agent instead of starting one. */
  threadId?: string;
  signal?: AbortSignal;
};

/** Result of `ctx.agents.run`. */
export type AgentRunOutput = { threadId: string; runId: string; status: string; text: string };

/** `ctx.agents`: runs other agents of the registry (`createPai`). */
export type AgentRunner = { run(input: AgentRunInput): Promise<AgentRunOutput> };

/** Where a call sits in the conversation; `runId`/`toolCallId` make good idempotency keys. */
export type ToolCallLocation = { threadId: string; runId: string; toolCallId: string; toolName: string };

/** What `execute` receives. Built by the runtime. */
export type ToolExecutionContext<
  TContract extends ToolContract = ToolContract,
  TToolContext = unknown,
  TCapabilities extends CapabilityMap = {},
  TTools = {},
> = {
  /** Parsed tool input (defaults and transforms applied). */
  input: TContract["input"];
  /** The context this tool declared: agent runtimeContext directly or a mapped value. */
  context: TToolContext;
  /** The agent executing this call: its registry id, or the agent's own name. */
  agentId: string;
  agents: AgentRunner;
  thread: ToolCallLocation;
  /** Runtime-bound facades keyed by the declared ctx names. */
  capabilities: CapabilityFacades<TCapabilities>;
  /** Typed calls to this tool's declared children. */
  tools: ToolCallMap<TTools>;
  signal: AbortSignal;
  entry: ToolEntry<TContract>;
  /** Durable suspension episodes of this call. Deliberately untyped: validate before relying on it. */
  suspendHistory: unknown[];
  data: ToolDataWriter<TContract>;
  files: ScopedFiles;
  /**
   * Pause at a named wait point and expose typed input to clients. `options.deadline` bounds
   * this wait (overriding the point's `deadline`; `null` for none). (The constraint is spelled
   * out rather than written as `SuspendName<TContract>` so that an unknown name's error lists
   * the valid names, `"approve" | "confirm"`, instead of printing the alias.)
   */
  suspend<TName extends keyof TContract["suspend"] & string>(
    name: TName,
    input: TContract["suspend"][TName]["input"],
    options?: SuspendOptions,
  ): ToolSuspendResult<TContract, TName>;
  /** Resolve as a deliberate, model-visible failure. */
  fail(failure: ToolFailure): ToolFailResult;
  /** Trigger follow-up generation on this thread. */
  trigger(input: ToolTriggerInput): Promise<unknown>;
};

/** What execute may return (or resolve to). */
export type ToolExecuteResult<TContract extends ToolContract = ToolContract> =
  | ContractOutput<TContract>
  | ToolSuspendResult<TContract, SuspendName<TContract>>
  | ToolFailResult;

/** A backend implementation. */
export type ToolExecute<
  TContract extends ToolContract = ToolContract,
  TToolContext = unknown,
  TCapabilities extends CapabilityMap = {},
  TTools = {},
> = (
  ctx: ToolExecutionContext<TContract, TToolContext, TCapabilities, TTools>,
) => ToolExecuteResult<TContract> | Promise<ToolExecuteResult<TContract>>;

/** Schemas and metadata of a definition; the callback lives only on `execute`. */
export type ToolDefinitionConfig<
  TContract extends ToolContract = ToolContract,
  TContext = unknown,
  TTools = {},
  TInputSchema extends ToolSchema = ToolSchema,
> = {
  readonly description: ToolDescription<TContext, TTools>;
  readonly inputSchema: TInputSchema;
  readonly outputSchema?: ToolSchema;
  readonly toModelOutput?: ToolModelOutput<TContract>;
  readonly contextSchema?: ZodToolSchema;
  readonly suspend?: SuspendMap;
  readonly dataSchemas?: Record<string, ToolSchema>;
  /** How long each client-routed call may wait for its output (tools without execute only). */
  readonly deadline?: ToolDeadline<TContract["input"]>;
};

/** A tool definition, as `defineTool` returns it (frozen). */
export type ToolDefinition<
  TContract extends ToolContract = ToolContract,
  TContext = unknown,
  TCapabilities extends CapabilityMap = {},
  TTools = {},
  TInputSchema extends ToolSchema = ToolSchema,
> = {
  readonly kind: "tool";
  /** Stable wire-spec identity, preserved as a string literal. */
  readonly id: TContract["id"];
  /** Type-only public contract (an empty object at runtime). */
  readonly contract: TContract;
  /** Type-only server context inferred from `contextSchema` (`undefined` at runtime). */
  readonly context: TContext;
  readonly config: ToolDefinitionConfig<TContract, TContext, TTools, TInputSchema>;
  /** Declared capability tokens keyed by ctx name; `{}` when none. */
  readonly capabilities: TCapabilities;
  /** Normalized child registrations; present only when declared. */
  readonly tools?: {
    readonly [K in keyof TTools]: NormalizedToolRegistration<RegisteredTool<TTools[K]>, TContext>;
  };
  /** Backend implementation, absent for client/externally answered tools. */
  readonly execute?: ToolExecute<TContract, TContext, TCapabilities, TTools>;
};

/**
 * The loose, spec-shaped config type (useful for `satisfies ToolConfig`). `defineTool`
 * itself infers every piece separately so that callbacks are typed precisely.
 */
export type ToolConfig<TContext = unknown, TTools extends ToolMap = {}> = {
  /** Stable identity for this definition, independent of registration names. Must be a literal. */
  id: string;
  description: ToolDescription<TContext, TTools>;
  inputSchema: ToolSchema;
  outputSchema?: ToolSchema;
  toModelOutput?: ToolModelOutput<any>;
  contextSchema?: ZodToolSchema;
  suspend?: SuspendMap;
  dataSchemas?: Record<string, ToolSchema>;
  deadline?: ToolDeadline<any>;
  capabilities?: CapabilityMap;
  tools?: TTools;
  execute?: ToolExecute<any, any, any, any>;
};

/** The contract of a spec-shaped config type (see `ToolConfig`). */
export type InferToolContract<TConfig extends ToolConfig<any, any>> = {
  id: TConfig["id"];
  name: string;
  hasExecute: TConfig["execute"] extends ToolExecute<any, any, any, any> ? true : false;
  input: ParsedToolSchema<TConfig["inputSchema"]>;
  output: TConfig["outputSchema"] extends ToolSchema ? ParsedToolSchema<TConfig["outputSchema"]> : unknown;
  data: InferToolDataContracts<TConfig["dataSchemas"]>;
  suspend: TConfig["execute"] extends ToolExecute<any, any, any, any>
    ? InferSuspendContracts<TConfig["suspend"]>
    : {};
};

type UnionToIntersection<U> = (U extends unknown ? (value: U) => void : never) extends (
  value: infer I,
) => void
  ? I
  : never;

/**
 * Context an enclosing tool without `contextSchema` requires: the intersection of its
 * children's declared contexts (`unknown` when none declares one).
 */
export type ChildContextIntersection<TTools> = [keyof TTools] extends [never]
  ? unknown
  : UnionToIntersection<
        { [K in keyof TTools]: [ToolContextOf<RegisteredTool<TTools[K]>>] }[keyof TTools]
      > extends [infer TContext]
    ? TContext
    : unknown;

/** The server context of a spec-shaped config type. */
export type InferToolContext<TConfig extends ToolConfig<any, any>> =
  TConfig["contextSchema"] extends ZodToolSchema
    ? ParsedToolSchema<TConfig["contextSchema"]>
    : ChildContextIntersection<NonNullable<TConfig["tools"]>>;
