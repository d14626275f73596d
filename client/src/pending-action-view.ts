import type {
  ActionDeadline,
  ActionResult,
  AgentContract,
  AgentContractOf,
  PendingActionOrigin as CorePendingActionOrigin,
  PendingActionRef as CorePendingActionRef,
  RunRequestOptions,
} from "@pai/core";

/** The contract of `TAgent`: an agent definition (`typeof agent`) or an agent contract. */
export type ContractOf<TAgent> = [AgentContractOf<TAgent>] extends [never]
  ? AgentContract
  : AgentContractOf<TAgent>;

/** Where a pending action came from: the open message and native tool call that created it. */
export type PendingActionOrigin<TAgent = AgentContract> = CorePendingActionOrigin<ContractOf<TAgent>>;

/** Stable reference to a pending action: origin plus action id and qualified name. */
export type PendingActionRef<TAgent = AgentContract> = CorePendingActionRef<ContractOf<TAgent>>;

/**
 * A pending action with its commands. A client command sidecar: it is not part of any
 * serializable message or tool part. Payloads stay `unknown` here; a client typed by an agent
 * contract exposes the same objects as `PaiPendingAction` (typed per action name).
 */
export type PendingActionView<TAgent = AgentContract> = {
  /** Fully qualified name, such as `requestApproval.approval` or `getSelectedText.output`. */
  name: string;
  input: unknown;
  origin: PendingActionOrigin<TAgent>;
  ref: PendingActionRef<TAgent>;
  /**
   * When the action resolves by itself if nobody answers (`at`, an ISO instant), how
   * (`resolution`) and what the model then reads (`reason`); null when it waits indefinitely.
   */
  deadline: ActionDeadline | null;
  /**
   * Answers the action: resume data for a suspension, the tool output for an output action.
   * `options` carries request extras (such as a client-tool snapshot) for the run it continues.
   */
  submit(resume: unknown, options?: RunRequestOptions): Promise<ActionResult>;
  /** Abandons the wait; recorded as a model-visible cancelled call. */
  cancel(input?: { reason?: string }): Promise<ActionResult>;
  /** Fails the call with a model-visible error. */
  fail(error: unknown): Promise<ActionResult>;
};
