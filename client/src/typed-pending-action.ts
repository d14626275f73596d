import type {
  ActionResult,
  AgentContract,
  RunRequestOptions,
  ToolInput,
  ToolName,
  ToolOutput,
  ToolSuspend,
} from "@pai/core";
import type { ContractOf, PendingActionView } from "./pending-action-view.js";

/**
 * True when `TAgent` names no concrete contract (the default `AgentContract`, whose tool names
 * are any string). Typed views then fall back to the low-level, `unknown`-payload shapes.
 */
// The keys go through `infer` on purpose: with the contract in the `extends` clause directly,
// TypeScript measures the client types as invariant in the agent, and a typed client would no
// longer be assignable to an untyped `PaiClient` (as `@pai/react`'s provider accepts).
export type IsOpenContract<TAgent> = [keyof ContractOf<TAgent>] extends [infer TKeys]
  ? string extends TKeys
    ? true
    : false
  : never;

/** `submit`'s arguments: the payload may be left out only when the schema accepts `undefined`. */
type SubmitArgs<TPayload> = undefined extends TPayload
  ? [payload?: TPayload, options?: RunRequestOptions]
  : [payload: TPayload, options?: RunRequestOptions];

/**
 * A pending action whose name, input and submit payload are known from the agent contract. It
 * is the same runtime object as a `PendingActionView`; only its type is narrower.
 */
export type TypedPendingActionView<TName extends string, TInput, TPayload, TAgent = AgentContract> = Omit<
  PendingActionView<TAgent>,
  "name" | "input" | "submit"
> & {
  /** Fully qualified name: `tool.point` for a suspension, `tool.output` for a client-routed call. */
  name: TName;
  input: TInput;
  /**
   * Answers the action: the resume payload of a suspension, or the tool output of a
   * client-routed call. `options` carries request extras for the run it continues.
   */
  submit(...args: SubmitArgs<TPayload>): Promise<ActionResult>;
};

type SuspendActions<TAgent, TTool extends ToolName<ContractOf<TAgent>>> = {
  [TPoint in keyof ToolSuspend<ContractOf<TAgent>, TTool> & string]: TypedPendingActionView<
    `${TTool}.${TPoint}`,
    ToolSuspend<ContractOf<TAgent>, TTool>[TPoint]["input"],
    ToolSuspend<ContractOf<TAgent>, TTool>[TPoint]["resume"],
    TAgent
  >;
}[keyof ToolSuspend<ContractOf<TAgent>, TTool> & string];

// Only tools without a backend execute are answered with their output by a client.
type OutputAction<TAgent, TTool extends ToolName<ContractOf<TAgent>>> = ContractOf<TAgent>[TTool] extends {
  hasExecute: true;
}
  ? never
  : TypedPendingActionView<
      `${TTool}.output`,
      ToolInput<ContractOf<TAgent>, TTool>,
      ToolOutput<ContractOf<TAgent>, TTool>,
      TAgent
    >;

/**
 * The pending actions one tool can have: one per suspend point (`tool.point`, payload typed
 * by its resume schema) and, for a tool without backend execute, its output action
 * (`tool.output`, payload typed by its output schema). `never` when the tool cannot wait.
 */
export type ToolPendingAction<TAgent, TTool extends ToolName<ContractOf<TAgent>>> =
  | SuspendActions<TAgent, TTool>
  | OutputAction<TAgent, TTool>;

/**
 * A pending action of `TAgent`: a union discriminated by `name` when the contract is known,
 * else the low-level `PendingActionView`.
 *
 * Actions of tools outside the contract (request-time client tools, tools removed since the
 * call) are still listed at runtime; their names never match a contract name, so narrowing
 * by name stays sound, but an exhaustive `switch` over `name` should keep a default branch.
 */
export type PaiPendingAction<TAgent = AgentContract> =
  IsOpenContract<TAgent> extends true
    ? PendingActionView<TAgent>
    : { [TTool in ToolName<ContractOf<TAgent>>]: ToolPendingAction<TAgent, TTool> }[ToolName<
        ContractOf<TAgent>
      >];

/** Qualified names of `TAgent`'s pending actions (`string` for an open contract). */
export type PendingActionName<TAgent = AgentContract> = PaiPendingAction<TAgent>["name"];

/** The pending action called `TName`. */
export type PendingActionNamed<TAgent, TName extends string> =
  IsOpenContract<TAgent> extends true
    ? PendingActionView<TAgent>
    : Extract<PaiPendingAction<TAgent>, { name: TName }>;

/**
 * The pending action a tool part can have: typed by the tool for a `tool-<name>` part of the
 * contract, untyped for a `dynamic-tool` part (its tool is not in the contract).
 */
export type PendingActionForPart<TAgent, TPart> =
  IsOpenContract<TAgent> extends true
    ? PendingActionView<TAgent>
    : TPart extends { type: "dynamic-tool" }
      ? PendingActionView<TAgent>
      : TPart extends { type: `tool-${infer TTool}` }
        ? TTool extends ToolName<ContractOf<TAgent>>
          ? ToolPendingAction<TAgent, TTool>
          : PendingActionView<TAgent>
        : PaiPendingAction<TAgent>;
