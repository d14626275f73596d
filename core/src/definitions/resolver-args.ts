import type { JsonValue } from "../json/json-value.js";
import type { Identity, Scope } from "./identity.js";

/** What every agent behaviour resolver receives (`runtimeContext`, `instructions`). */
export type RuntimeContextArgs = {
  /** The host's trusted identity (typed through `Register`). */
  identity: Identity;
  /** Trusted tenancy derived from the identity. */
  scope: Scope;
  /** Untrusted request data. Never an authorization source. */
  clientData: JsonValue | undefined;
  threadId: string;
  /** Aborts when the run or request is cancelled. */
  signal: AbortSignal;
};

/** Arguments of registration resolvers (`enabled`, `mapContext`) and `instructions`. */
export type ToolResolverArgs<TRuntimeContext = unknown> = RuntimeContextArgs & {
  /** The agent's runtime context, or the enclosing tool's context for child registrations. */
  runtimeContext: TRuntimeContext;
};

/** Arguments of a registration's `onOutput` observer. */
export type ToolOutputArgs<
  TRuntimeContext = unknown,
  TInput = unknown,
  TOutput = unknown,
> = ToolResolverArgs<TRuntimeContext> & {
  /** Parsed tool input. */
  input: TInput;
  /** Settled, validated output the next model step sees. */
  output: TOutput;
  /** The name this agent (or parent tool) registered the tool under. */
  tool: { name: string };
  call: { toolCallId: string };
};
