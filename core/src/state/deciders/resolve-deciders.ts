import type { JsonValue } from "../../json/json-value.js";
import type { ActionRow, ClientToolSnapshot } from "../rows.js";
import type { ThreadSnapshot } from "../snapshot.js";
import { type ActionResolution, resolveAction, type ToolOutcome } from "../transitions.js";
import { type Decision, decided, type Effect, rejected } from "./decision.js";

/**
 * Deciding an answer to a pending action, on the state the commit is made against: the first
 * answer wins; an answer that carries the winner's idempotency key gets the winner's result
 * (also when it raced the winner and lost the version check); any other is CONFLICT.
 */

export type ResolveKind = "submit" | "cancel" | "fail";

export type ResolveInput = {
  actionId: string;
  kind: ResolveKind;
  resolution: ActionResolution;
  idempotencyKey: string | null;
  /**
   * How the answered call finishes: `none` settles it in this commit; `resume` re-enters a
   * suspended tool; `hooks` runs `afterToolResult` and `onOutput` on `outcome` after this commit
   * won, and the call settles in a later commit.
   */
  finish: { type: "none" } | { type: "resume" } | { type: "hooks"; outcome: ToolOutcome };
  /** Client tools the answering request sent: they replace the run's for its next steps. */
  clientTools?: ClientToolSnapshot[];
  identity?: JsonValue | null;
  /**
   * The answering process does not drive runs (a job engine's API instance): a `resume` finish
   * is left to the worker that drives the run next (`resumeQueued`), instead of re-entering the
   * tool here.
   */
  queueResume?: boolean;
};

export type ResolveValue =
  | { type: "resolved"; action: ActionRow }
  /** The same idempotency key already resolved the action: its result, nothing written. */
  | { type: "replayed"; action: ActionRow; version: number };

export function matchesKind(action: ActionRow, kind: ResolveKind): boolean {
  return (
    (kind === "submit" && action.state === "submitted") ||
    (kind === "cancel" && action.state === "cancelled") ||
    (kind === "fail" && action.state === "failed")
  );
}

export function decideResolve(
  snapshot: ThreadSnapshot,
  input: ResolveInput,
  now: string,
): Decision<ResolveValue> {
  const action = snapshot.actions.find((candidate) => candidate.actionId === input.actionId);
  if (!action)
    return rejected("NOT_FOUND", `No action ${input.actionId} in thread ${snapshot.thread.threadId}.`);
  if (action.state !== "pending") {
    if (
      input.idempotencyKey &&
      action.idempotencyKey === input.idempotencyKey &&
      matchesKind(action, input.kind)
    ) {
      return decided([], [], {
        type: "replayed",
        action,
        version: action.resolvedVersion ?? snapshot.thread.version,
      });
    }
    return rejected(
      "CONFLICT",
      `Action ${action.name} (${action.actionId}) was already ${action.state}; it can be resolved only once.`,
    );
  }
  const deferred = input.finish.type === "hooks" || input.finish.type === "resume";
  const transition = resolveAction(snapshot, {
    actionId: input.actionId,
    resolution: input.resolution,
    idempotencyKey: input.idempotencyKey,
    now,
    ...(deferred ? { settle: false } : {}),
  });
  if (!transition.ok) return transition;
  const queued = input.finish.type === "resume" && input.queueResume === true;
  const found = transition.events.find(
    (event): event is Extract<typeof event, { type: "action-upserted" }> =>
      event.type === "action-upserted" && event.action.actionId === action.actionId,
  )!;
  const resolved: typeof found.action = queued ? { ...found.action, resumeQueued: true } : found.action;
  if (queued) found.action = resolved;
  const run = snapshot.runs.find((candidate) => candidate.runId === action.runId);
  const wakes = run?.status === "waiting";
  const events = transition.events.map((event) =>
    input.clientTools && event.type === "run-upserted" && event.run.runId === action.runId
      ? { ...event, run: { ...event.run, clientTools: input.clientTools, identity: input.identity ?? null } }
      : event,
  );
  const effects: Effect[] = [];
  // Waking a parked run: nobody drives it, so this commit takes its lease for this process.
  if (wakes) effects.push({ type: "take-lease", runId: action.runId });
  effects.push({ type: "action-resolved", action: resolved, resolution: input.kind });
  const finish = input.finish;
  if (finish.type === "resume" && !queued) effects.push({ type: "resume-call", action: resolved });
  else if (finish.type === "hooks")
    effects.push({ type: "finish-answer", action: resolved, outcome: finish.outcome });
  // A resumed call and a call settled after its hooks drive the run once they have committed.
  else effects.push({ type: "drive", runId: action.runId });
  return decided(events, effects, { type: "resolved", action: resolved });
}
