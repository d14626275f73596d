import { PaiError } from "../errors/pai-error.js";
import { decideFireSchedule } from "../state/deciders/schedule-deciders.js";
import type { ThreadSnapshot } from "../state/snapshot.js";
import { dueDeadlines, dueSchedules } from "../state/wake.js";
import type { ResolveRequest } from "./resolve-action.js";
import { scopeOf } from "./run-driver.js";
import type { RuntimeCore } from "./runtime-core.js";

/** What waking a thread needs of the engine besides the shared core. */
export type WakeHost = RuntimeCore & {
  resolve(input: ResolveRequest): Promise<unknown>;
  scheduledMessage(
    threadId: string,
    schedule: { message: string; data: unknown; scheduleId: string },
  ): Parameters<typeof decideFireSchedule>[1]["start"];
};

/** Conflicts and vanished rows mean another process got there first: nothing to do. */
function lostRace(error: unknown): boolean {
  return PaiError.isInstance(error) && (error.code === "CONFLICT" || error.code === "NOT_FOUND");
}

/**
 * Acts on what is due on a thread at the runtime's `now`: a pending action whose deadline passed
 * resolves as its deadline says, through the same exactly-once path as an answer (an answer
 * that won first makes this a no-op; a later answer gets CONFLICT); a due schedule fires once
 * (its advance and the run it starts are one commit). Safe to call any number of times, from
 * any process, early or late: a call that finds nothing due does nothing, and an early one
 * asks to be woken again at the thread's `wakeAt`.
 */
export async function wakeThread(
  rt: WakeHost,
  threadId: string,
): Promise<{ resolved: number; fired: number }> {
  const snapshot = await rt.store.load(threadId);
  if (!snapshot) return { resolved: 0, fired: 0 };
  try {
    rt.agent(snapshot.thread.agentId);
  } catch {
    // Another deployment's agent: its own runtime wakes it.
    return { resolved: 0, fired: 0 };
  }
  const now = rt.now();
  let resolved = 0;
  let fired = 0;
  for (const action of dueDeadlines(snapshot, now)) {
    const deadline = action.deadline!;
    const run = snapshot.runs.find((candidate) => candidate.runId === action.runId);
    try {
      await rt.resolve({
        threadId,
        actionId: action.actionId,
        identity: run?.identity ?? null,
        scope: scopeOf(snapshot),
        kind: deadline.resolution === "fail" ? "fail" : "cancel",
        reason: deadline.reason,
        error: deadline.reason,
        // The thread as just read saves the resolve a second read; after a commit here it is
        // one version behind, and the resolve reads again.
        ...(resolved === 0 ? { snapshot } : {}),
      });
      resolved++;
    } catch (error) {
      if (!lostRace(error)) rt.reportError({ error, phase: "recovery", threadId, runId: action.runId });
    }
  }
  for (const schedule of dueSchedules(snapshot, now)) {
    try {
      const start = rt.scheduledMessage(threadId, schedule);
      const committed = await rt.writer.commit(
        threadId,
        (state, at) => decideFireSchedule(state, { scheduleId: schedule.scheduleId, start }, at),
        { origin: { identity: null, scope: scopeOf(snapshot) } },
      );
      if (committed.value.fired) fired++;
    } catch (error) {
      if (!lostRace(error)) rt.reportError({ error, phase: "recovery", threadId });
    }
  }
  if (resolved === 0 && fired === 0) askAgain(rt, snapshot, now);
  return { resolved, fired };
}

/** A wake-up that came early (clocks differ between hosts) asks again for the stored instant. */
function askAgain(rt: RuntimeCore, snapshot: ThreadSnapshot, now: string): void {
  const wakeAt = snapshot.thread.wakeAt;
  if (wakeAt && wakeAt > now) rt.dispatch.wakeAt(snapshot.thread.threadId, snapshot.thread.scopeKey, wakeAt);
}
