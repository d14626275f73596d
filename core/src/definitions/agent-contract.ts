import type { ToolContract } from "./tool-contract.js";

/** An agent's public contract: tool contract per registration name. */
export type AgentContract = Record<string, ToolContract>;

/** Anything that carries an agent's tools at the type level (an `AgentDefinition`). */
type AgentLike = {
  readonly kind: "agent";
  readonly tools: Record<string, { readonly tool: { readonly contract: ToolContract } }>;
};

/** The contract of an agent definition; each tool contract's `name` is its registration key. */
export type InferAgentContract<TAgent extends AgentLike> = {
  [K in keyof TAgent["tools"] & string]: {
    [P in keyof TAgent["tools"][K]["tool"]["contract"]]: P extends "name"
      ? K
      : TAgent["tools"][K]["tool"]["contract"][P];
  };
};

/** Accepts an `AgentContract` or an agent definition (`typeof agent`). */
export type AgentContractOf<TAgent> = TAgent extends AgentLike
  ? InferAgentContract<TAgent>
  : TAgent extends AgentContract
    ? TAgent
    : never;

/** Registration names of an agent. */
export type ToolName<TAgent> = keyof AgentContractOf<TAgent> & string;

type ContractAt<TAgent, TName> = TName extends keyof AgentContractOf<TAgent>
  ? AgentContractOf<TAgent>[TName]
  : never;

/** Parsed input of a registered tool. */
export type ToolInput<TAgent, TName extends ToolName<TAgent>> = ContractAt<TAgent, TName>["input"];

/** Parsed output of a registered tool. */
export type ToolOutput<TAgent, TName extends ToolName<TAgent>> = ContractAt<TAgent, TName>["output"];

/** Suspend contracts (`{ input, resume }` per point) of a registered tool. */
export type ToolSuspend<TAgent, TName extends ToolName<TAgent>> = ContractAt<TAgent, TName>["suspend"];

/** Data channel contracts of a registered tool. */
export type ToolData<TAgent, TName extends ToolName<TAgent>> = ContractAt<TAgent, TName>["data"];
