import type { PaiErrorCode, PaiIssue } from "../errors/pai-error.js";
import type { JsonValue } from "../json/json-value.js";
import { cancellationText, failureText, INTERRUPTED_TEXT } from "./call-texts.js";
import type { ThreadEvent } from "./events.js";
import type {
  ActionRow,
  MessageRow,
  RunRow,
  RunStatus,
  ThreadRow,
  ThreadStatus,
  ToolDataRow,
} from "./rows.js";
import type { ThreadSnapshot } from "./snapshot.js";
import { findToolPart, isStoredToolPart, isUnsettledToolPart, type StoredToolPart } from "./tool-parts.js";

/**
 * Pure transitions of the thread state machine: `(snapshot, command) -> events | rejection`.
 * They never await, read a clock or make ids; callers pass `now` and ids in. A rejection
 * means nothing may be written.
 */
export type Rejection = { ok: false; code: PaiErrorCode; message: string; issues?: PaiIssue[] };
/**
 * Events to commit, or a rejection. `after` is the snapshot the events lead to from the one the
 * transition was decided on, when the decider already projected them: the writer and the store
 * use it instead of applying the events again (each projection of a message copies the
 * thread's message list).
 */
export type Transition = { ok: true; events: ThreadEvent[]; after?: ThreadSnapshot } | Rejection;

const reject = (code: PaiErrorCode, message: string, issues?: PaiIssue[]): Rejection => ({
  ok: false,
  code,
  message,
  ...(issues ? { issues } : {}),
});

export const ACTIVE_RUN_STATUSES: ReadonlySet<RunStatus> = new Set(["running", "waiting"]);
export const TERMINAL_RUN_STATUSES: ReadonlySet<RunStatus> = new Set(["completed", "failed", "cancelled"]);

export type ToolOutcome =
  | { type: "output"; output: JsonValue | undefined }
  | { type: "error"; errorText: string };

function findRun(snapshot: ThreadSnapshot, runId: string): RunRow | undefined {
  return snapshot.runs.find((run) => run.runId === runId);
}

function findMessage(snapshot: ThreadSnapshot, messageId: string): MessageRow | undefined {
  // From the end: the message a step looks for is almost always the open tail.
  return snapshot.messages.findLast((message) => message.messageId === messageId);
}

function threadEvent(snapshot: ThreadSnapshot, patch: Partial<ThreadRow>, now: string): ThreadEvent {
  return { type: "thread-updated", thread: { ...snapshot.thread, ...patch, updatedAt: now } };
}

/** The currently active (running or waiting) run, if any. */
export function activeRun(snapshot: ThreadSnapshot): RunRow | undefined {
  return snapshot.runs.find((run) => ACTIVE_RUN_STATUSES.has(run.status));
}

/** Pending actions, optionally of one run. */
export function pendingActions(snapshot: ThreadSnapshot, runId?: string): ActionRow[] {
  return snapshot.actions.filter(
    (action) => action.state === "pending" && (!runId || action.runId === runId),
  );
}

export function nextMessagePosition(snapshot: ThreadSnapshot): number {
  const last = snapshot.messages.at(-1);
  return last ? last.position + 1 : 1;
}

/** What a run is waiting for: pending actions, and tool calls with neither an outcome nor a pending action. */
export function analyzeRun(snapshot: ThreadSnapshot, runId: string) {
  const run = findRun(snapshot, runId);
  const pending = pendingActions(snapshot, runId);
  const tail = run?.messageId ? findMessage(snapshot, run.messageId) : undefined;
  const unsettled: StoredToolPart[] = [];
  if (tail) {
    const waiting = new Set(pending.map((action) => action.toolCallId));
    for (const part of tail.message.parts as Array<{ type: string }>) {
      if (isStoredToolPart(part) && isUnsettledToolPart(part) && !waiting.has(part.toolCallId)) {
        unsettled.push(part);
      }
    }
  }
  return { run, pending, unsettled, tail };
}

export function createThread(input: { thread: ThreadRow }): Transition {
  return { ok: true, events: [{ type: "thread-updated", thread: { ...input.thread, version: 0 } }] };
}

/**
 * Starts a run (optionally appending the message that triggered it). A second active run
 * is rejected; queued runs are allowed at any time.
 */
export function startRun(
  snapshot: ThreadSnapshot,
  input: { run: RunRow; message?: MessageRow; now: string },
): Transition {
  const current = activeRun(snapshot);
  if (input.run.status !== "queued" && current) {
    return reject(
      "CONFLICT",
      `Thread ${snapshot.thread.threadId} already has a ${current.status} run (${current.runId}). Wait for it, answer its pending actions, or cancel it first.`,
    );
  }
  const events: ThreadEvent[] = [];
  if (input.message) events.push({ type: "message-upserted", message: input.message });
  events.push({ type: "run-upserted", run: input.run });
  if (input.run.status === "running") {
    events.push(threadEvent(snapshot, { status: "running", activeRunId: input.run.runId }, input.now));
  }
  return { ok: true, events };
}

/**
 * Commits one model step: appends parts to the run's open tail message (creating it when
 * `messageId` is new) and records output actions for tool calls that wait for a client.
 */
export function commitStep(
  snapshot: ThreadSnapshot,
  input: {
    runId: string;
    messageId: string;
    parts: unknown[];
    outputActions: ActionRow[];
    now: string;
    settled?: Array<{ toolCallId: string; outcome: ToolOutcome }>;
    /** The run's step count the model call was prepared from; a step decided on stale history is rejected. */
    expectedStep?: number;
  },
): Transition {
  const run = findRun(snapshot, input.runId);
  if (run?.status !== "running") {
    return reject("CONFLICT", `Run ${input.runId} is not running; its step cannot be committed.`);
  }
  if (input.expectedStep !== undefined && run.step !== input.expectedStep) {
    return reject(
      "CONFLICT",
      `Run ${input.runId} advanced to step ${run.step} while step ${input.expectedStep + 1} was prepared; the step is dropped.`,
    );
  }
  // A run's first step starts its message (searching a long thread for an id that cannot be
  // there cost a scan of every message); later steps append to it, found near the end.
  const existing = run.messageId === null ? undefined : findMessage(snapshot, input.messageId);
  let message: MessageRow = existing
    ? {
        ...existing,
        message: { ...existing.message, parts: [...existing.message.parts, ...(input.parts as never[])] },
        updatedAt: input.now,
      }
    : {
        threadId: snapshot.thread.threadId,
        messageId: input.messageId,
        position: nextMessagePosition(snapshot),
        role: "assistant",
        message: { id: input.messageId, role: "assistant", parts: input.parts as never[] },
        runId: input.runId,
        createdAt: input.now,
        updatedAt: input.now,
      };
  for (const settled of input.settled ?? []) {
    message = settlePart(message, settled.toolCallId, settled.outcome, input.now) ?? message;
  }
  const events: ThreadEvent[] = [
    { type: "message-upserted", message },
    {
      type: "run-upserted",
      run: { ...run, step: run.step + 1, messageId: input.messageId, updatedAt: input.now },
    },
  ];
  for (const action of input.outputActions) events.push({ type: "action-upserted", action });
  if (input.outputActions.length > 0 && snapshot.thread.status !== "running") {
    events.push(threadEvent(snapshot, { status: "running" }, input.now));
  }
  return { ok: true, events };
}

function settlePart(
  message: MessageRow,
  toolCallId: string,
  outcome: ToolOutcome,
  now: string,
): MessageRow | null {
  const found = findToolPart(message.message, toolCallId);
  if (!found || !isUnsettledToolPart(found.part)) return null;
  const { output: _output, errorText: _errorText, ...rest } = found.part;
  const part =
    outcome.type === "output"
      ? { ...rest, state: "output-available", output: outcome.output === undefined ? null : outcome.output }
      : { ...rest, state: "output-error", errorText: outcome.errorText };
  const parts = message.message.parts.slice();
  parts[found.index] = part as never;
  return { ...message, message: { ...message.message, parts }, updatedAt: now };
}

/** Records the outcome of a tool call on its native part. Rejects when it already has one. */
export function settleToolCall(
  snapshot: ThreadSnapshot,
  input: { runId: string; toolCallId: string; outcome: ToolOutcome; now: string },
): Transition {
  const run = findRun(snapshot, input.runId);
  const tail = run?.messageId ? findMessage(snapshot, run.messageId) : undefined;
  if (!run || !tail || TERMINAL_RUN_STATUSES.has(run.status)) {
    return reject("CONFLICT", `Run ${input.runId} no longer accepts tool outcomes.`);
  }
  if (pendingActions(snapshot, input.runId).some((action) => action.toolCallId === input.toolCallId)) {
    return reject("CONFLICT", `Tool call ${input.toolCallId} has a pending action; resolve it instead.`);
  }
  const message = settlePart(tail, input.toolCallId, input.outcome, input.now);
  if (!message) return reject("CONFLICT", `Tool call ${input.toolCallId} already has an outcome.`);
  return { ok: true, events: [{ type: "message-upserted", message }] };
}

/** Records a suspension: a new pending action for a tool call that has no outcome yet. */
export function suspendToolCall(
  snapshot: ThreadSnapshot,
  input: { action: ActionRow; now: string },
): Transition {
  const { action } = input;
  const run = findRun(snapshot, action.runId);
  const tail = run?.messageId ? findMessage(snapshot, run.messageId) : undefined;
  const found = tail ? findToolPart(tail.message, action.toolCallId) : null;
  if (!run || TERMINAL_RUN_STATUSES.has(run.status) || !found || !isUnsettledToolPart(found.part)) {
    return reject("CONFLICT", `Tool call ${action.toolCallId} can no longer suspend.`);
  }
  if (pendingActions(snapshot).some((existing) => existing.toolCallId === action.toolCallId)) {
    return reject("CONFLICT", `Tool call ${action.toolCallId} already has a pending action.`);
  }
  if (snapshot.actions.some((existing) => existing.actionId === action.actionId)) {
    return reject("CONFLICT", `Action ${action.actionId} already exists.`);
  }
  return { ok: true, events: [{ type: "action-upserted", action: { ...action, state: "pending" } }] };
}

export type ActionResolution =
  | { type: "submit"; payload: JsonValue | null; outcome?: ToolOutcome }
  | { type: "cancel"; reason: string | null; errorText: string }
  | { type: "fail"; message: string; errorText: string; outcome?: ToolOutcome };

/**
 * Resolves a pending action exactly once. Output actions and cancel/fail also settle the
 * tool part; a submitted suspension leaves the part waiting for the re-entered tool.
 */
export function resolveAction(
  snapshot: ThreadSnapshot,
  input: {
    actionId: string;
    resolution: ActionResolution;
    idempotencyKey: string | null;
    now: string;
    /** `false` leaves the call without an outcome: it is settled by a later commit (after its hooks). */
    settle?: boolean;
  },
): Transition {
  const action = snapshot.actions.find((candidate) => candidate.actionId === input.actionId);
  if (!action)
    return reject("NOT_FOUND", `No action ${input.actionId} in thread ${snapshot.thread.threadId}.`);
  if (action.state !== "pending") {
    return reject(
      "CONFLICT",
      `Action ${action.name} (${action.actionId}) was already ${action.state}; it can be resolved only once.`,
    );
  }
  const { resolution } = input;
  const resolved: ActionRow = {
    ...action,
    state: resolution.type === "submit" ? "submitted" : resolution.type === "cancel" ? "cancelled" : "failed",
    resolvedAt: input.now,
    resume: resolution.type === "submit" ? resolution.payload : null,
    reason:
      resolution.type === "cancel"
        ? resolution.reason
        : resolution.type === "fail"
          ? resolution.message
          : null,
    idempotencyKey: input.idempotencyKey,
    resolvedVersion: snapshot.thread.version + 1,
  };
  const events: ThreadEvent[] = [{ type: "action-upserted", action: resolved }];
  const outcome: ToolOutcome | undefined =
    resolution.type === "submit"
      ? resolution.outcome
      : resolution.type === "fail" && resolution.outcome
        ? resolution.outcome
        : { type: "error", errorText: resolution.errorText };
  if (outcome && input.settle !== false) {
    const run = findRun(snapshot, action.runId);
    const tail = run?.messageId
      ? findMessage(snapshot, run.messageId)
      : findMessage(snapshot, action.messageId);
    const message = tail ? settlePart(tail, action.toolCallId, outcome, input.now) : null;
    if (message) events.push({ type: "message-upserted", message });
  }
  const run = findRun(snapshot, action.runId);
  if (run && run.status === "waiting") {
    events.push({ type: "run-upserted", run: { ...run, status: "running", updatedAt: input.now } });
    events.push(threadEvent(snapshot, { status: "running", activeRunId: run.runId }, input.now));
  }
  return { ok: true, events };
}

/** Moves a run to a new status; terminal statuses also free the thread. */
export function setRunStatus(
  snapshot: ThreadSnapshot,
  input: {
    runId: string;
    status: RunStatus;
    error?: string | null;
    now: string;
    clientTools?: RunRow["clientTools"];
  },
): Transition {
  const run = findRun(snapshot, input.runId);
  if (!run) return reject("NOT_FOUND", `No run ${input.runId} in thread ${snapshot.thread.threadId}.`);
  if (TERMINAL_RUN_STATUSES.has(run.status)) {
    return reject("CONFLICT", `Run ${input.runId} already ${run.status}.`);
  }
  const terminal = TERMINAL_RUN_STATUSES.has(input.status);
  if (input.status === "completed" && pendingActions(snapshot, run.runId).length > 0) {
    return reject(
      "CONFLICT",
      `Run ${input.runId} has pending actions; it cannot complete before they are resolved.`,
    );
  }
  if (input.status === "cancelled" || input.status === "failed") {
    if (
      pendingActions(snapshot, run.runId).length > 0 ||
      analyzeRun(snapshot, run.runId).unsettled.length > 0
    ) {
      return closeRun(snapshot, {
        runId: run.runId,
        status: input.status,
        reason: input.error ?? null,
        now: input.now,
      });
    }
  }
  const next: RunRow = {
    ...run,
    status: input.status,
    error: input.error ?? run.error,
    updatedAt: input.now,
    finishedAt: terminal ? input.now : run.finishedAt,
    ...(input.clientTools ? { clientTools: input.clientTools } : {}),
  };
  const threadStatus: ThreadStatus = terminal ? "idle" : input.status === "waiting" ? "waiting" : "running";
  const events: ThreadEvent[] = [{ type: "run-upserted", run: next }];
  if (input.status !== "queued") {
    events.push(
      threadEvent(snapshot, { status: threadStatus, activeRunId: terminal ? null : run.runId }, input.now),
    );
  }
  return { ok: true, events };
}

/**
 * Cancels a run: pending actions become cancelled, tool calls without an outcome become
 * model-visible `output-error`s, and the run ends as `cancelled`.
 */
export function cancelRun(
  snapshot: ThreadSnapshot,
  input: { runId: string; reason: string | null; now: string },
): Transition {
  return closeRun(snapshot, { ...input, status: "cancelled" });
}

/**
 * Ends a run as cancelled or failed: pending actions are cancelled and tool calls without an
 * outcome get a model-visible `output-error`, so no pending work outlives its run.
 */
function closeRun(
  snapshot: ThreadSnapshot,
  input: { runId: string; reason: string | null; now: string; status: "cancelled" | "failed" },
): Transition {
  const run = findRun(snapshot, input.runId);
  if (!run) return reject("NOT_FOUND", `No run ${input.runId} in thread ${snapshot.thread.threadId}.`);
  if (TERMINAL_RUN_STATUSES.has(run.status))
    return reject("CONFLICT", `Run ${input.runId} already ${run.status}.`);
  const errorText = input.status === "cancelled" ? cancellationText(input.reason) : failureText(input.reason);
  const events: ThreadEvent[] = [];
  for (const action of pendingActions(snapshot, run.runId)) {
    events.push({
      type: "action-upserted",
      action: { ...action, state: "cancelled", resolvedAt: input.now, reason: input.reason },
    });
  }
  const tail = run.messageId ? findMessage(snapshot, run.messageId) : undefined;
  if (tail) {
    let message = tail;
    for (const part of tail.message.parts as Array<{ type: string }>) {
      if (isStoredToolPart(part) && isUnsettledToolPart(part)) {
        message = settlePart(message, part.toolCallId, { type: "error", errorText }, input.now) ?? message;
      }
    }
    if (message !== tail) events.push({ type: "message-upserted", message });
  }
  events.push({
    type: "run-upserted",
    run: {
      ...run,
      status: input.status,
      error: input.reason ?? run.error,
      updatedAt: input.now,
      finishedAt: input.now,
    },
  });
  events.push(threadEvent(snapshot, { status: "idle", activeRunId: null }, input.now));
  return { ok: true, events };
}

/** Marks tool calls that started but committed no outcome (after a crash) as interrupted. */
export function interruptUnsettled(
  snapshot: ThreadSnapshot,
  input: { runId: string; now: string; keep?: ReadonlySet<string> },
): Transition {
  const { tail, unsettled } = analyzeRun(snapshot, input.runId);
  if (!tail || unsettled.length === 0) return { ok: true, events: [] };
  let message = tail;
  for (const part of unsettled) {
    // Calls this process is still running, or a resume queued for a worker, are not leftovers.
    if (input.keep?.has(part.toolCallId)) continue;
    message =
      settlePart(message, part.toolCallId, { type: "error", errorText: INTERRUPTED_TEXT }, input.now) ??
      message;
  }
  return { ok: true, events: message === tail ? [] : [{ type: "message-upserted", message }] };
}

/** Writes (or replaces, by id) one durable tool-data item. */
export function writeToolData(snapshot: ThreadSnapshot, input: { item: ToolDataRow }): Transition {
  if (input.item.threadId !== snapshot.thread.threadId) {
    return reject("INVALID_INPUT", "Tool data belongs to another thread.");
  }
  return { ok: true, events: [{ type: "tool-data-upserted", item: input.item }] };
}

/** Appends a message outside a model step (user message, trusted notification). */
export function appendMessage(snapshot: ThreadSnapshot, input: { message: MessageRow }): Transition {
  if (snapshot.messages.some((message) => message.messageId === input.message.messageId)) {
    return reject("CONFLICT", `Message ${input.message.messageId} already exists in this thread.`);
  }
  return { ok: true, events: [{ type: "message-upserted", message: input.message }] };
}
