import type { PaiErrorCode, PaiIssue } from "../../errors/pai-error.js";
import type { ThreadEvent } from "../events.js";
import type { ActionRow } from "../rows.js";
import type { ThreadSnapshot } from "../snapshot.js";
import type { Rejection, ToolOutcome, Transition } from "../transitions.js";

/**
 * What the runtime must do after a decision's events are committed. Effects are data: a
 * decider names them, and the runtime carries them out only once the commit has won, so a
 * request that lost a race (version conflict) never runs an observer, hook or driver.
 */
export type Effect =
  /** Take the run's lease in the same commit (a run nobody drives: created, dequeued or woken). */
  | { type: "take-lease"; runId: string }
  /** A run started running: report it and drive it. */
  | { type: "run-started"; runId: string }
  /** Continue driving a run that is (or may be) running. */
  | { type: "drive"; runId: string }
  /** A run reached a terminal status: report it, drop what this process holds for it, start the next queued run. */
  | { type: "run-ended"; runId: string; status: "completed" | "failed" | "cancelled"; error: string | null }
  /** A run waits on pending actions: this process holds nothing for it any more. */
  | { type: "run-parked"; runId: string }
  /** A run this process may hold bookkeeping for is no longer active; start the next queued run. */
  | { type: "run-released"; runId: string }
  /** A pending action was created. */
  | { type: "action-opened"; action: ActionRow }
  /** A pending action was answered. */
  | { type: "action-resolved"; action: ActionRow; resolution: "submit" | "cancel" | "fail" }
  /**
   * Finish an answered call after the answering commit won: `afterToolResult`, then `onOutput`
   * for an output, then settle the call. Only the commit that resolved the action yields it.
   */
  | { type: "finish-answer"; action: ActionRow; outcome: ToolOutcome }
  /** Re-enter a suspended tool with the submitted resume value. */
  | { type: "resume-call"; action: ActionRow }
  /** The thread's `wakeAt` moved to this instant: have it woken then (added by the writer, not deciders). */
  | { type: "wake-at"; at: string };

/**
 * A decision: events to commit and effects to carry out once they are committed, plus a value for
 * the caller. `after`, when set, is what the events lead to from the decided-on snapshot (see
 * `Transition`).
 */
export type Decision<T = undefined> =
  | { ok: true; events: ThreadEvent[]; effects: Effect[]; value: T; after?: ThreadSnapshot }
  | Rejection;

export type Decide<T = undefined> = (snapshot: ThreadSnapshot, now: string) => Decision<T>;

export function decided<T>(
  events: ThreadEvent[],
  effects: Effect[],
  value: T,
  after?: ThreadSnapshot,
): Decision<T> {
  return after ? { ok: true, events, effects, value, after } : { ok: true, events, effects, value };
}

export function rejected(code: PaiErrorCode, message: string, issues?: PaiIssue[]): Rejection {
  return { ok: false, code, message, ...(issues ? { issues } : {}) };
}

/** Lifts a transition (events only) into a decision with the given effects. */
export function fromTransition<T>(transition: Transition, effects: Effect[], value: T): Decision<T> {
  return transition.ok ? decided(transition.events, effects, value, transition.after) : transition;
}
