import { applyThreadEvents, type ThreadSnapshot } from "./snapshot.js";
import { analyzeRun, setRunStatus, type Transition } from "./transitions.js";

/**
 * Extends a transition with the run's move to `waiting` when, after it, the run has pending
 * actions and no tool call left without an outcome. The commit that creates a run's last
 * blocker then also parks it: one write instead of two, and no moment where a run with
 * nothing to do still reads as `running`.
 */
export function parkIfBlocked(
  snapshot: ThreadSnapshot,
  transition: Transition,
  input: { runId: string; now: string },
): Transition {
  if (!transition.ok || transition.events.length === 0) return transition;
  const after = transition.after ?? applyThreadEvents(snapshot, transition.events);
  const unchanged = { ok: true as const, events: transition.events, after };
  const { run, pending, unsettled } = analyzeRun(after, input.runId);
  if (run?.status !== "running" || pending.length === 0 || unsettled.length > 0) return unchanged;
  const parked = setRunStatus(after, { runId: input.runId, status: "waiting", now: input.now });
  if (!parked.ok) return unchanged;
  return {
    ok: true,
    events: [...transition.events, ...parked.events],
    after: applyThreadEvents(after, parked.events),
  };
}
