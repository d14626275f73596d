import type { z } from "zod";
import type { CapabilityMap } from "../capabilities/capability.js";
import { PaiError } from "../errors/pai-error.js";
import { deadlineProblem, type ToolDeadline } from "./deadline.js";
import { normalizeRegistrations, type ToolRegistrationsInput } from "./registrations.js";
import type { ToolSchema } from "./schema.js";
import type { BuildToolContract, ParsedToolSchema, SuspendMap, ZodToolSchema } from "./tool-contract.js";
import type {
  AnyToolDefinition,
  ChildContextIntersection,
  ToolDefinition,
  ToolDescription,
  ToolExecute,
  ToolModelOutput,
} from "./tool-types.js";

type IsUnion<T, TAll = T> = T extends unknown ? ([TAll] extends [T] ? false : true) : never;

/**
 * Resolves to an error-message type when the id was widened to `string`, is a union of
 * literals (a tool has one stable id), or is empty. The id parameter is `TId & ToolIdCheck<TId>`:
 * a literal intersected with a message literal is `never`, and the compiler would say only that,
 * so the union and empty cases are objects keyed by the message, which it prints.
 */
export type ToolIdCheck<TId extends string> = string extends TId
  ? 'Error: the tool id must be a string literal. Pass the config inline, or write id: "app.tool-name.v1" as const.'
  : true extends IsUnion<TId>
    ? { "Error: the tool id must be one string literal, not a union": "give each tool its own defineTool" }
    : TId extends ""
      ? { "Error: the tool id must not be empty": 'write id: "app.tool-name.v1"' }
      : unknown;

type ToolContextFor<TContextSchema, TTools> = TContextSchema extends ZodToolSchema
  ? z.output<TContextSchema>
  : ChildContextIntersection<TTools>;

type ExecutingContract<TId, TInputSchema, TOutputSchema, TData, TSuspend> = BuildToolContract<
  TId,
  TInputSchema,
  TOutputSchema,
  TData,
  TSuspend,
  true
>;

/**
 * Keys present in the config literal. `defineTool` infers them separately to learn whether
 * `execute` was given without inferring from execute's return (which would widen literals).
 */
type PresentKeys<TKeys extends PropertyKey> = { readonly [K in TKeys]?: unknown };

/** The input `defineTool` accepts; each piece is inferred separately so callbacks are typed precisely. */
export type DefineToolConfig<
  TId extends string,
  TInputSchema extends ToolSchema,
  TOutputSchema extends ToolSchema | undefined,
  TContextSchema extends ZodToolSchema | undefined,
  TSuspend extends SuspendMap | undefined,
  TData extends Record<string, ToolSchema> | undefined,
  TCapabilities extends CapabilityMap,
  TTools extends Record<string, AnyToolDefinition>,
> = {
  /** Stable, globally unique identity of this wire spec. Must be a string literal. */
  id: TId & ToolIdCheck<TId>;
  /** Static text, or a synchronous callback of the tool's context and enabled children. */
  description: ToolDescription<ToolContextFor<TContextSchema, TTools>, TTools>;
  inputSchema: TInputSchema;
  outputSchema?: TOutputSchema;
  toModelOutput?: ToolModelOutput<ExecutingContract<TId, TInputSchema, TOutputSchema, TData, TSuspend>>;
  /** Zod schema of the context this tool needs (static inference only). */
  contextSchema?: TContextSchema;
  /** Named wait points. Requires execute. */
  suspend?: TSuspend;
  dataSchemas?: TData;
  /**
   * How long each call may wait for a client's output: fixed, or chosen from the call's input.
   * Only for tools without execute; a backend tool puts deadlines on its suspend points.
   */
  deadline?: ToolDeadline<ParsedToolSchema<TInputSchema>>;
  /** Capability tokens keyed by ctx name. Requires execute. */
  capabilities?: TCapabilities;
  /** Child tools callable through ctx.tools. Each must be an ordinary backend tool. */
  tools?: ToolRegistrationsInput<
    TTools,
    ToolContextFor<TContextSchema, TTools>,
    ToolContextFor<TContextSchema, TTools>,
    "the parent tool's context"
  >;
  /**
   * Backend implementation. Omit it when a client or external worker supplies the output.
   * (Wrapped in an always-true conditional: TypeScript instantiates a conditional contextual
   * type before typing the callback, so returned literals such as `{ status: "rejected" }`
   * are checked against the concrete output type instead of being widened.)
   */
  execute?: [TOutputSchema] extends [unknown]
    ? ToolExecute<
        ExecutingContract<TId, TInputSchema, TOutputSchema, TData, TSuspend>,
        ToolContextFor<TContextSchema, TTools>,
        TCapabilities,
        TTools
      >
    : never;
};

/** The definition type `defineTool` returns for the inferred pieces. */
export type DefinedTool<
  TId extends string,
  TInputSchema extends ToolSchema,
  TOutputSchema extends ToolSchema | undefined,
  TContextSchema extends ZodToolSchema | undefined,
  TSuspend extends SuspendMap | undefined,
  TData extends Record<string, ToolSchema> | undefined,
  TCapabilities extends CapabilityMap,
  TTools extends Record<string, AnyToolDefinition>,
  THasExecute extends boolean,
> = ToolDefinition<
  BuildToolContract<TId, TInputSchema, TOutputSchema, TData, TSuspend, THasExecute>,
  ToolContextFor<TContextSchema, TTools>,
  TCapabilities,
  TTools,
  TInputSchema
>;

function fail(message: string): never {
  throw new PaiError("INVALID_DEFINITION", message);
}

function checkChild(owner: string, name: string, child: AnyToolDefinition): void {
  const label = `${owner}: child tool "${name}" (id "${child.id}")`;
  if (typeof child.execute !== "function") {
    fail(
      `${label} has no execute. Children run inside the parent's execute, so only ordinary backend tools can be children; give it an execute or register it on the agent instead.`,
    );
  }
  if (child.config.suspend !== undefined) {
    fail(
      `${label} declares suspend points. Children cannot suspend; register the tool on the agent directly, or move the wait point into the parent.`,
    );
  }
  if (child.config.dataSchemas !== undefined) {
    fail(
      `${label} declares dataSchemas. Children cannot write tool data; write it from the parent through ctx.data, or remove dataSchemas from the child.`,
    );
  }
  if (child.tools !== undefined) {
    fail(
      `${label} declares its own tools. Nesting is one level deep; register those tools on the parent instead.`,
    );
  }
}

/** A deadline that could never resolve fails the definition rather than every call that waits. */
function checkDeadlines(owner: string, suspend: unknown, deadline: unknown, hasExecute: boolean): void {
  if (typeof suspend === "object" && suspend !== null) {
    for (const [name, point] of Object.entries(suspend)) {
      const declared = typeof point === "object" && point !== null ? point.deadline : undefined;
      const problem = declared === undefined ? null : deadlineProblem(declared);
      if (problem) fail(`${owner}: suspend point "${name}" has an invalid deadline: ${problem}.`);
    }
  }
  if (deadline === undefined) return;
  if (hasExecute) {
    fail(
      `${owner}: deadline is for tools whose output a client supplies, and this tool has an execute. Put the deadline on a suspend point, or pass it to ctx.suspend(name, input, { deadline }).`,
    );
  }
  if (typeof deadline === "function") return;
  const problem = deadlineProblem(deadline);
  if (problem) fail(`${owner}: invalid deadline: ${problem}.`);
}

/**
 * Defines a tool: a stable literal `id`, schemas, and optionally a backend `execute`,
 * named suspend points, data channels, capabilities and child tools. Throws a `PaiError`
 * (`INVALID_DEFINITION`) for definitions that could never run correctly.
 */
export function defineTool<
  const TId extends string,
  TInputSchema extends ToolSchema,
  TOutputSchema extends ToolSchema | undefined = undefined,
  TContextSchema extends ZodToolSchema | undefined = undefined,
  TSuspend extends SuspendMap | undefined = undefined,
  TData extends Record<string, ToolSchema> | undefined = undefined,
  TCapabilities extends CapabilityMap = {},
  TTools extends Record<string, AnyToolDefinition> = {},
  TKeys extends PropertyKey = never,
>(
  config: DefineToolConfig<
    TId,
    TInputSchema,
    TOutputSchema,
    TContextSchema,
    TSuspend,
    TData,
    TCapabilities,
    TTools
  > &
    PresentKeys<TKeys>,
): DefinedTool<
  TId,
  TInputSchema,
  TOutputSchema,
  TContextSchema,
  TSuspend,
  TData,
  TCapabilities,
  TTools,
  "execute" extends TKeys ? true : false
> {
  if (typeof config !== "object" || config === null) fail("defineTool: expected a config object.");
  const id: unknown = config.id;
  if (typeof id !== "string" || id.trim() === "") {
    fail(
      `defineTool: a tool id must be a non-empty string (got ${JSON.stringify(id)}). Give the tool a stable, namespaced id such as "app.lookup-customer.v1".`,
    );
  }
  if (id.trim() !== id) {
    fail(
      `defineTool: tool id ${JSON.stringify(id)} has leading or trailing whitespace. Remove it: ids are compared exactly, so write ${JSON.stringify(id.trim())}.`,
    );
  }
  const owner = `defineTool("${id}")`;
  if (config.inputSchema === undefined || config.inputSchema === null) {
    fail(`${owner}: inputSchema is required. Use z.object({}) for a tool without input.`);
  }
  if (typeof config.description !== "string" && typeof config.description !== "function") {
    fail(`${owner}: description must be a string or a synchronous function of { context, tools }.`);
  }
  if (config.execute !== undefined && typeof config.execute !== "function") {
    fail(`${owner}: execute must be a function when present.`);
  }
  const hasExecute = typeof config.execute === "function";
  const capabilities = (config.capabilities ?? {}) as CapabilityMap;
  if (!hasExecute && Object.keys(capabilities).length > 0) {
    fail(
      `${owner}: capabilities are declared but there is no execute. Capabilities are bound only for backend execution; add an execute or remove capabilities.`,
    );
  }
  if (!hasExecute && config.suspend !== undefined) {
    fail(
      `${owner}: suspend points are declared but there is no execute. Only a backend execute can enter a wait point; add an execute, or remove suspend so the tool's output is submitted by a client instead.`,
    );
  }
  checkDeadlines(owner, config.suspend, config.deadline, hasExecute);
  let tools: Record<string, unknown> | undefined;
  if (config.tools !== undefined) {
    tools = normalizeRegistrations(config.tools as Record<string, unknown>, owner);
    for (const [name, registration] of Object.entries(tools)) {
      checkChild(owner, name, (registration as { tool: AnyToolDefinition }).tool);
    }
  }
  const definitionConfig = Object.freeze({
    description: config.description,
    inputSchema: config.inputSchema,
    ...(config.outputSchema !== undefined ? { outputSchema: config.outputSchema } : {}),
    ...(config.toModelOutput !== undefined ? { toModelOutput: config.toModelOutput } : {}),
    ...(config.contextSchema !== undefined ? { contextSchema: config.contextSchema } : {}),
    ...(config.suspend !== undefined ? { suspend: config.suspend } : {}),
    ...(config.dataSchemas !== undefined ? { dataSchemas: config.dataSchemas } : {}),
    ...(config.deadline !== undefined ? { deadline: config.deadline } : {}),
  });
  const definition = {
    kind: "tool" as const,
    id,
    contract: Object.freeze({}),
    context: undefined,
    config: definitionConfig,
    capabilities: Object.freeze({ ...capabilities }),
    ...(tools !== undefined ? { tools } : {}),
    ...(hasExecute ? { execute: config.execute } : {}),
  };
  return Object.freeze(definition) as never;
}
