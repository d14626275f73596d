import { PaiError } from "../errors/pai-error.js";
import { copyRows } from "../json/copy-rows.js";
import type { JsonValue } from "../json/json-value.js";
import type { StartRunInput } from "../state/deciders/run-deciders.js";
import { decideCancelSchedule, decideCreateSchedule } from "../state/deciders/schedule-deciders.js";
import type { MessageRow, ScheduleRow, ScheduleTiming } from "../state/rows.js";
import { timingProblem } from "../state/wake.js";
import type { RuntimeCore } from "./runtime-core.js";

/** What schedules need of the engine besides the shared core. */
export type ScheduleHost = RuntimeCore & {
  notificationMessage(
    threadId: string,
    input: { notification: string | undefined; data: JsonValue | undefined; hidden: boolean },
  ): MessageRow;
};

export type CreateScheduleInput = {
  threadId: string;
  scheduleId?: string;
  timing: ScheduleTiming;
  message: string;
  data?: unknown;
};

const SCHEDULE_ID = /^[A-Za-z0-9_.:-]{1,128}$/;
const MAX_MESSAGE = 10_000;

/** The start of the run a schedule's firing makes: its message as a trusted notification. */
export function scheduledRunStart(
  rt: ScheduleHost,
  threadId: string,
  schedule: { message: string; data: unknown },
): StartRunInput {
  const data = schedule.data === null || schedule.data === undefined ? undefined : rt.json(schedule.data);
  const message = rt.notificationMessage(threadId, { notification: schedule.message, data, hidden: false });
  return {
    runId: rt.generateId(),
    message,
    trigger: {
      type: "trigger",
      messageId: message.messageId,
      notification: schedule.message,
      ...(data !== undefined ? { data } : {}),
    },
    clientTools: [],
    clientData: null,
    identity: null,
    queueIfBusy: true,
    cancelPending: false,
  };
}

/** Adds a schedule to a thread (trusted: the caller checked the scope). Every input is bounded first. */
export async function createSchedule(rt: ScheduleHost, input: CreateScheduleInput): Promise<ScheduleRow> {
  const problem = timingProblem(input.timing);
  if (problem) throw new PaiError("INVALID_INPUT", `Invalid schedule: ${problem}.`);
  if (typeof input.message !== "string" || input.message.length === 0 || input.message.length > MAX_MESSAGE) {
    throw new PaiError("INVALID_INPUT", `A schedule needs a message of 1 to ${MAX_MESSAGE} characters.`);
  }
  if (input.scheduleId !== undefined && !SCHEDULE_ID.test(input.scheduleId)) {
    throw new PaiError(
      "INVALID_INPUT",
      "A scheduleId is 1 to 128 characters of letters, digits and _ . : - (or leave it out for a generated one).",
    );
  }
  const timing: ScheduleTiming =
    "at" in input.timing
      ? { at: new Date(input.timing.at).toISOString() }
      : { cron: input.timing.cron, ...(input.timing.timezone ? { timezone: input.timing.timezone } : {}) };
  const data = input.data === undefined ? null : rt.json(input.data, "Schedule data");
  const scheduleId = input.scheduleId ?? rt.generateId();
  const committed = await rt.writer.commit(input.threadId, (snapshot, now) =>
    decideCreateSchedule(snapshot, { scheduleId, timing, message: input.message, data }, now),
  );
  return copyRows(committed.value);
}

/** Cancels an active schedule (NOT_FOUND for an unknown id, CONFLICT once it ended). */
export async function cancelSchedule(
  rt: RuntimeCore,
  input: { threadId: string; scheduleId: string },
): Promise<ScheduleRow> {
  const committed = await rt.writer.commit(input.threadId, (snapshot, now) =>
    decideCancelSchedule(snapshot, input.scheduleId, now),
  );
  return copyRows(committed.value);
}
