import { CronExpressionParser } from "cron-parser";
import { PaiError } from "../errors/pai-error.js";
import type { ThreadEvent } from "./events.js";
import type { ActionRow, ScheduleRow, ScheduleTiming } from "./rows.js";
import { applyThreadEvents, type ThreadSnapshot } from "./snapshot.js";

/**
 * When things are due on a thread: pending actions' deadlines and schedules' firings. Pure;
 * the runtime keeps `thread.wakeAt` equal to `threadWakeAt` on every commit, so storage can
 * list due threads with one indexed query and a lost wake-up is only late.
 */

/** The earliest deadline of a pending action or firing of an active schedule, or null. */
export function threadWakeAt(snapshot: ThreadSnapshot): string | null {
  let earliest: string | null = null;
  const consider = (at: string | null | undefined) => {
    if (at && (earliest === null || at < earliest)) earliest = at;
  };
  for (const action of snapshot.actions) if (action.state === "pending") consider(action.deadline?.at);
  for (const schedule of snapshot.thread.schedules ?? [])
    if (schedule.state === "active") consider(schedule.nextAt);
  return earliest;
}

/** Pending actions whose deadline is at or before `now`. */
export function dueDeadlines(snapshot: ThreadSnapshot, now: string): ActionRow[] {
  return snapshot.actions.filter(
    (action) => action.state === "pending" && action.deadline != null && action.deadline.at <= now,
  );
}

/** Active schedules whose next firing is at or before `now`. */
export function dueSchedules(snapshot: ThreadSnapshot, now: string): ScheduleRow[] {
  return (snapshot.thread.schedules ?? []).filter(
    (schedule) => schedule.state === "active" && schedule.nextAt !== null && schedule.nextAt <= now,
  );
}

/**
 * Adds `wakeAt` to a commit's events when the decision moved it: the thread row the batch
 * writes carries the new value (a batch that writes no thread row gains one). `projected` is
 * what `events` lead to from `snapshot` when the decider already knows it; the result's `after`
 * is what the returned events lead to.
 */
export function withWakeAt(
  snapshot: ThreadSnapshot,
  events: ThreadEvent[],
  projected?: ThreadSnapshot,
): { events: ThreadEvent[]; after: ThreadSnapshot; wakeAt: string | null; moved: boolean } {
  const after = projected ?? applyThreadEvents(snapshot, events);
  const wakeAt = threadWakeAt(after);
  const moved = wakeAt !== (snapshot.thread.wakeAt ?? null);
  if ((after.thread.wakeAt ?? null) === wakeAt) return { events, after, wakeAt, moved };
  const thread = { ...after.thread, wakeAt };
  const lastThread = events.findLastIndex((event) => event.type === "thread-updated");
  const next = events.slice();
  if (lastThread >= 0) next[lastThread] = { type: "thread-updated", thread };
  else next.push({ type: "thread-updated", thread });
  return { events: next, after: { ...after, thread }, wakeAt, moved };
}

/** The first firing of a timing strictly after `after` (ISO), or null when there is none. */
export function nextFiring(timing: ScheduleTiming, after: string): string | null {
  if ("at" in timing) return timing.at > after ? timing.at : null;
  const expression = CronExpressionParser.parse(timing.cron, {
    currentDate: new Date(after),
    ...(timing.timezone ? { tz: timing.timezone } : {}),
  });
  return expression.next().toISOString();
}

/** Why a timing is not usable (a malformed cron, an unknown timezone, a bad instant), or null. */
export function timingProblem(timing: ScheduleTiming): string | null {
  if (typeof timing !== "object" || timing === null) return "a schedule needs { at } or { cron }";
  if ("at" in timing) {
    return typeof timing.at === "string" && !Number.isNaN(Date.parse(timing.at))
      ? null
      : "`at` must be an ISO timestamp";
  }
  if (!("cron" in timing) || typeof timing.cron !== "string" || timing.cron.length > 120) {
    return "a schedule needs { at } or { cron } (a cron expression of at most 120 characters)";
  }
  if (timing.cron.trim().split(/\s+/).length !== 5) {
    return "`cron` must have five fields (minute hour day-of-month month day-of-week)";
  }
  try {
    nextFiring(timing, new Date().toISOString());
    return null;
  } catch (error) {
    const detail = error instanceof Error ? error.message : "invalid";
    return `\`cron\` "${timing.cron}"${timing.timezone ? ` in ${timing.timezone}` : ""} is not valid: ${detail.slice(0, 200)}`;
  }
}

/** `at` or `cron` (not both) as a schedule's timing. */
export function scheduleTiming(input: {
  at?: Date | string;
  cron?: string;
  timezone?: string;
}): ScheduleTiming {
  if ((input.at === undefined) === (input.cron === undefined)) {
    throw new PaiError("INVALID_INPUT", "A schedule needs exactly one of `at` (an instant) or `cron`.");
  }
  if (input.at !== undefined) {
    const at = input.at instanceof Date ? input.at : new Date(input.at);
    if (Number.isNaN(at.getTime())) throw new PaiError("INVALID_INPUT", "`at` must be a valid instant.");
    return { at: at.toISOString() };
  }
  return {
    cron: input.cron as string,
    ...(input.timezone !== undefined ? { timezone: input.timezone } : {}),
  };
}
