import type { ScheduleRow, ScheduleTiming } from "../rows.js";
import { applyThreadEvent, type ThreadSnapshot } from "../snapshot.js";
import { nextFiring } from "../wake.js";
import { type Decision, decided, rejected } from "./decision.js";
import { decideStartRun, type StartRunInput } from "./run-deciders.js";

/** Active schedules a thread may hold, and ended ones it keeps for its history. */
export const MAX_ACTIVE_SCHEDULES = 20;
const ENDED_KEPT = 10;

function withSchedules(snapshot: ThreadSnapshot, schedules: ScheduleRow[]) {
  const active = schedules.filter((schedule) => schedule.state === "active");
  const ended = schedules.filter((schedule) => schedule.state !== "active").slice(-ENDED_KEPT);
  return {
    type: "thread-updated" as const,
    thread: { ...snapshot.thread, schedules: [...ended, ...active] },
  };
}

/** Adds a schedule to a thread; its first firing is the first instant of its timing after `now`. */
export function decideCreateSchedule(
  snapshot: ThreadSnapshot,
  input: { scheduleId: string; timing: ScheduleTiming; message: string; data: ScheduleRow["data"] },
  now: string,
): Decision<ScheduleRow> {
  const schedules = snapshot.thread.schedules ?? [];
  if (schedules.some((schedule) => schedule.scheduleId === input.scheduleId)) {
    return rejected(
      "CONFLICT",
      `Thread ${snapshot.thread.threadId} already has schedule ${input.scheduleId}.`,
    );
  }
  if (schedules.filter((schedule) => schedule.state === "active").length >= MAX_ACTIVE_SCHEDULES) {
    return rejected(
      "CONFLICT",
      `Thread ${snapshot.thread.threadId} has ${MAX_ACTIVE_SCHEDULES} active schedules, the most it may hold. Cancel one first.`,
    );
  }
  // A one-off instant in the past fires at once.
  const nextAt = "at" in input.timing ? input.timing.at : nextFiring(input.timing, now);
  const schedule: ScheduleRow = {
    scheduleId: input.scheduleId,
    timing: input.timing,
    message: input.message,
    data: input.data,
    state: nextAt === null ? "done" : "active",
    nextAt,
    fired: 0,
    lastFiredAt: null,
    createdAt: now,
    cancelledAt: null,
  };
  return decided([withSchedules(snapshot, [...schedules, schedule])], [], schedule);
}

/** Cancels an active schedule; cancelling one that already ended is a CONFLICT. */
export function decideCancelSchedule(
  snapshot: ThreadSnapshot,
  scheduleId: string,
  now: string,
): Decision<ScheduleRow> {
  const schedules = snapshot.thread.schedules ?? [];
  const found = schedules.find((schedule) => schedule.scheduleId === scheduleId);
  if (!found)
    return rejected("NOT_FOUND", `No schedule ${scheduleId} in thread ${snapshot.thread.threadId}.`);
  if (found.state !== "active") {
    return rejected("CONFLICT", `Schedule ${scheduleId} is already ${found.state}.`);
  }
  const cancelled: ScheduleRow = { ...found, state: "cancelled", nextAt: null, cancelledAt: now };
  const next = schedules.map((schedule) => (schedule.scheduleId === scheduleId ? cancelled : schedule));
  return decided([withSchedules(snapshot, next)], [], cancelled);
}

/**
 * Fires a due schedule once: advances it (its next cron instant after `now`, or done) and starts
 * or queues the run that reads its message, in one commit. A schedule that is not due (fired
 * by another process, cancelled, moved) decides nothing, so duplicate wake-ups are harmless.
 */
export function decideFireSchedule(
  snapshot: ThreadSnapshot,
  input: { scheduleId: string; start: StartRunInput },
  now: string,
): Decision<{ fired: boolean }> {
  const schedules = snapshot.thread.schedules ?? [];
  const found = schedules.find((schedule) => schedule.scheduleId === input.scheduleId);
  if (found?.state !== "active" || found.nextAt === null || found.nextAt > now) {
    return decided([], [], { fired: false });
  }
  const nextAt = "at" in found.timing ? null : nextFiring(found.timing, now);
  const fired: ScheduleRow = {
    ...found,
    fired: found.fired + 1,
    lastFiredAt: now,
    nextAt,
    state: nextAt === null ? "done" : "active",
  };
  const advanced = withSchedules(
    snapshot,
    schedules.map((schedule) => (schedule.scheduleId === input.scheduleId ? fired : schedule)),
  );
  const started = decideStartRun(applyThreadEvent(snapshot, advanced), input.start, now);
  if (!started.ok) return started;
  return decided([advanced, ...started.events], started.effects, { fired: true });
}
