import type {
  ActionResult,
  PendingActionOriginData,
  PendingActionRefData,
  RunRequestOptions,
} from "@pai/core";

/**
 * Where a pending action came from. `TAgent` is the agent contract the client was created
 * with; until core's contract types land it only documents intent (tool names stay strings).
 */
export type PendingActionOrigin<_TAgent = unknown> = PendingActionOriginData;

/** Stable reference to a pending action: origin plus action id and qualified name. */
export type PendingActionRef<_TAgent = unknown> = PendingActionRefData;

/**
 * A pending action with its commands. A client command sidecar: it is not part of any
 * serializable message or tool part. Payloads stay `unknown` here; typed bindings re-narrow them.
 */
export type PendingActionView<TAgent = unknown> = {
  /** Fully qualified name, such as `requestApproval.approval` or `getSelectedText.output`. */
  name: string;
  input: unknown;
  origin: PendingActionOrigin<TAgent>;
  ref: PendingActionRef<TAgent>;
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
