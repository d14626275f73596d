import type { AgentContract, AgentContractOf, Register } from "@pai/core";

/**
 * Type-level views of agent and tool contracts as the React bindings need them. They match
 * the shape of `@pai/core`'s `ToolContract` structurally, so an agent definition's contract
 * (`typeof agent`) or a hand-written contract map both work.
 */

/** The part of a tool contract the React bindings read. */
export type ToolContractLike = {
  input: unknown;
  output: unknown;
  data: Record<string, unknown>;
  suspend: Record<string, { input: unknown; resume: unknown }>;
  /** `false` for server-declared client-routed tools (no backend execute). */
  hasExecute?: boolean;
};

/** Tool contracts keyed by registration name. */
export type AgentContractLike = Record<string, ToolContractLike>;

type RegistrationContract<TRegistration> = TRegistration extends {
  readonly contract: infer TContract extends ToolContractLike;
}
  ? TContract
  : TRegistration extends { readonly tool: { readonly contract: infer TContract extends ToolContractLike } }
    ? TContract
    : ToolContractLike;

/**
 * The contract map of an agent: from an agent definition (`typeof agent`), from a contract map,
 * or an open map (any tool name, payloads `unknown`) when nothing is known.
 */
export type ContractOf<TAgent> = unknown extends TAgent
  ? AgentContractLike
  : TAgent extends { readonly kind: "agent"; readonly tools: infer TTools }
    ? { [TName in keyof TTools & string]: RegistrationContract<TTools[TName]> }
    : TAgent extends AgentContractLike
      ? TAgent
      : AgentContractLike;

/**
 * What types an agent binding's thread (`ThreadHandle<TAgent>`, `@pai/client`'s typed views):
 * an agent definition or a `@pai/core` agent contract as is; a contract map in the shape of
 * `AgentContractLike` with each tool's `name` added; the open `AgentContract` (payloads
 * `unknown`) when nothing is known.
 */
export type ThreadAgentOf<TAgent> = [AgentContractOf<TAgent>] extends [never]
  ? TAgent extends AgentContractLike
    ? { [TName in keyof TAgent & string]: TAgent[TName] & { name: TName } }
    : AgentContract
  : TAgent;

/**
 * Agents known to the default `Pai` bindings, declared once by the app:
 *
 *   declare module "@pai/core" { interface Register { agents: { main: typeof agent } } }
 */
export type RegisteredAgents = Register extends { agents: infer TAgents extends Record<string, unknown> }
  ? TAgents
  : Record<string, unknown>;

/** The parsed (output) type of a Standard Schema (Zod 4 included) or an AI SDK `jsonSchema<T>()`. */
export type SchemaOutput<TSchema> = TSchema extends {
  readonly "~standard": { readonly types?: infer TTypes };
}
  ? NonNullable<TTypes> extends { readonly output: infer TOutput }
    ? TOutput
    : unknown
  : TSchema extends { readonly _type: infer TOutput }
    ? TOutput
    : unknown;

/** The contract of a frontend-defined tool, inferred from its schemas. */
export type FrontendToolContract<TInputSchema, TOutputSchema> = {
  input: SchemaOutput<TInputSchema>;
  output: [TOutputSchema] extends [undefined] ? unknown : SchemaOutput<TOutputSchema>;
  // No channels and no suspend points: only a backend execute can write data or suspend.
  data: Record<never, never>;
  suspend: Record<never, never>;
  hasExecute: false;
};

/** Names of tools a client may answer: server tools without backend execute. */
export type ClientRoutedToolName<TContract extends AgentContractLike> = {
  [TName in keyof TContract & string]: TContract[TName]["hasExecute"] extends true ? never : TName;
}[keyof TContract & string];

type Simplify<T> = { [K in keyof T]: T[K] } & {};

/** Server contracts plus the frontend-defined tools of an agent binding's config. */
export type MergedContract<
  TContract extends AgentContractLike,
  TInputs extends Record<string, unknown>,
  TOutputs,
> = Simplify<
  TContract & {
    [TName in Exclude<keyof TInputs, keyof TContract> & string]: FrontendToolContract<
      TInputs[TName],
      TName extends keyof TOutputs ? TOutputs[TName] : undefined
    >;
  }
>;
