import type { JsonValue } from "../../json/json-value.js";
import type { ThreadEvent } from "../events.js";
import type { ActionRow, ClientToolSnapshot, MessageRow, RunRow } from "../rows.js";
import { applyThreadEvent, applyThreadEvents, type ThreadSnapshot } from "../snapshot.js";
import { isStoredToolPart, type StoredToolPart } from "../tool-parts.js";
import {
  activeRun,
  analyzeRun,
  appendMessage,
  cancelRun,
  interruptUnsettled,
  nextMessagePosition,
  pendingActions,
  setRunStatus,
  startRun,
} from "../transitions.js";
import { type Decision, decided, type Effect, fromTransition, rejected } from "./decision.js";

/**
 * Deciders of a run's life: start or queue, dequeue, the driver's next move, park, finish,
 * interrupt leftovers of a dead process, cancel. Each returns the events to commit and the
 * effects to carry out once they are committed.
 */

export type StartRunInput = {
  runId: string;
  message: MessageRow | null;
  trigger: RunRow["trigger"];
  clientTools: ClientToolSnapshot[];
  clientData: JsonValue | null;
  identity: JsonValue | null;
  /** Queue behind an active run instead of refusing (triggers). */
  queueIfBusy: boolean;
  /** Cancel a waiting run's pending actions to start this one (a user who moves on). */
  cancelPending: boolean;
};

/** Starts a run now, queues it behind the active one, or refuses (a busy thread, pending actions). */
/** Whether a stored message or a queued run's waiting message has this id. */
function messageIdTaken(snapshot: ThreadSnapshot, messageId: string): boolean {
  return (
    snapshot.messages.some((message) => message.messageId === messageId) ||
    snapshot.runs.some((run) => run.queuedMessage?.messageId === messageId)
  );
}

export function decideStartRun(
  snapshot: ThreadSnapshot,
  input: StartRunInput,
  now: string,
): Decision<{ queued: boolean }> {
  const threadId = snapshot.thread.threadId;
  // A message id names one message of the thread for good: a client-chosen id that is already
  // taken would replace the stored message (an upsert by key), someone else's or the model's.
  const messageId = input.message?.messageId;
  if (messageId !== undefined && messageIdTaken(snapshot, messageId)) {
    return rejected(
      "CONFLICT",
      `Thread ${threadId} already has a message with id "${messageId}". Send the message without an id (the server picks one) or with an id of its own.`,
    );
  }
  const events: ThreadEvent[] = [];
  const effects: Effect[] = [];
  let state = snapshot;
  let queued = false;
  const current = activeRun(state);
  if (current) {
    const pending = pendingActions(state, current.runId);
    if (input.cancelPending && current.status === "waiting") {
      const cancelled = cancelRun(state, {
        runId: current.runId,
        reason: "the user sent a new message",
        now,
      });
      if (!cancelled.ok) return cancelled;
      events.push(...cancelled.events);
      state = applyThreadEvents(state, cancelled.events);
      effects.push({ type: "run-ended", runId: current.runId, status: "cancelled", error: null });
    } else if (input.queueIfBusy) {
      queued = true;
    } else if (pending.length > 0) {
      return rejected(
        "CONFLICT",
        `Thread ${threadId} has pending actions (${pending.map((action) => `${action.name} [${action.actionId}]`).join(", ")}). Answer them with submit, cancel or fail, or send again with cancelPending: true.`,
      );
    } else {
      return rejected(
        "CONFLICT",
        `Thread ${threadId} is busy with run ${current.runId}. Wait for it to finish or cancel it first.`,
      );
    }
  }
  // Runs start in order: one queued before this request keeps its turn.
  if (!queued && snapshot.runs.some((run) => run.status === "queued")) queued = true;
  const run: RunRow = {
    threadId,
    runId: input.runId,
    status: queued ? "queued" : "running",
    trigger: input.trigger,
    step: 0,
    messageId: null,
    clientTools: input.clientTools,
    clientData: input.clientData,
    identity: input.identity,
    error: null,
    createdAt: now,
    updatedAt: now,
    finishedAt: null,
  };
  const message = input.message ? { ...input.message, position: nextMessagePosition(state) } : undefined;
  // A queued run's message waits in the run row: the active run's model must not see it yet.
  if (queued && message) run.queuedMessage = message;
  const started = startRun(state, { run, ...(message && !queued ? { message } : {}), now });
  if (!started.ok) return started;
  events.push(...started.events);
  if (!queued) {
    effects.push({ type: "take-lease", runId: input.runId }, { type: "run-started", runId: input.runId });
  }
  return decided(events, effects, { queued });
}

/** Starts the oldest queued run once the thread has no active run; nothing otherwise. */
export function decideStartQueued(snapshot: ThreadSnapshot, now: string): Decision<{ runId: string } | null> {
  if (activeRun(snapshot)) return decided([], [], null);
  const queued = snapshot.runs.find((run) => run.status === "queued");
  if (!queued) return decided([], [], null);
  // A queued run starts with the newest client-tool snapshot any request gave this thread.
  const latest = [...snapshot.runs]
    .filter((run) => run.status !== "queued")
    .sort((a, b) => a.updatedAt.localeCompare(b.updatedAt))
    .at(-1);
  const events: ThreadEvent[] = [];
  let state = snapshot;
  if (queued.queuedMessage) {
    const message = {
      ...queued.queuedMessage,
      position: nextMessagePosition(state),
      createdAt: now,
      updatedAt: now,
    };
    const appended = appendMessage(state, { message });
    if (!appended.ok) return appended;
    events.push(...appended.events);
    state = applyThreadEvents(state, appended.events);
  }
  state = applyThreadEvent(state, { type: "run-upserted", run: { ...queued, queuedMessage: null } });
  const status = setRunStatus(state, {
    runId: queued.runId,
    status: "running",
    now,
    ...(queued.clientTools.length === 0 && latest ? { clientTools: latest.clientTools } : {}),
  });
  if (!status.ok) return status;
  return decided(
    [...events, ...status.events],
    [
      { type: "take-lease", runId: queued.runId },
      { type: "run-started", runId: queued.runId },
    ],
    { runId: queued.runId },
  );
}

/** What the driver of a run does next. */
export type NextMove =
  /** The run is not this driver's to move (finished, queued or gone). */
  | { type: "stop" }
  /** The run is parked on pending actions. */
  | { type: "parked" }
  /** Tool calls a dead process started have no outcome: record them as interrupted. */
  | { type: "interrupt" }
  /** Tool calls of this process are still running; their outcome commits will drive again. */
  | { type: "await-calls" }
  /** A submitted suspension waits for the driver to re-enter its tool (an API instance took the answer). */
  | { type: "resume"; action: ActionRow }
  /** Every call has an outcome or a pending action, and some are pending: park. */
  | { type: "park" }
  /** The step limit is reached or the last step made no tool calls. */
  | { type: "finish" }
  /** Call the model for the next step. */
  | { type: "step"; run: RunRow };

/** Chooses a run's next move from the committed state and the calls this process is running. */
export function decideNextMove(
  snapshot: ThreadSnapshot,
  input: { runId: string; inflight: ReadonlySet<string>; maxSteps: number },
): NextMove {
  const { run, pending, unsettled } = analyzeRun(snapshot, input.runId);
  if (run?.status === "waiting") return { type: "parked" };
  if (run?.status !== "running") return { type: "stop" };
  const queued = queuedResumes(snapshot, input.runId).find(
    (action) =>
      !input.inflight.has(action.toolCallId) &&
      unsettled.some((part) => part.toolCallId === action.toolCallId),
  );
  if (queued) return { type: "resume", action: queued };
  if (unsettled.some((part) => !input.inflight.has(part.toolCallId))) return { type: "interrupt" };
  if (unsettled.length > 0) return { type: "await-calls" };
  if (pending.length > 0) return { type: "park" };
  if (run.step >= input.maxSteps || lastStepFinished(snapshot, run)) return { type: "finish" };
  return { type: "step", run };
}

/** A step that produced no tool calls ends the run. */
function lastStepFinished(snapshot: ThreadSnapshot, run: RunRow): boolean {
  if (run.step === 0 || !run.messageId) return false;
  const tail = snapshot.messages.findLast((message) => message.messageId === run.messageId);
  if (!tail) return false;
  const parts = tail.message.parts as Array<{ type: string }>;
  const lastStart = parts.map((part) => part.type).lastIndexOf("step-start");
  return !parts.slice(lastStart + 1).some((part) => isStoredToolPart(part));
}

/** Submitted suspensions of a run whose tool waits to be re-entered (`ActionRow.resumeQueued`). */
export function queuedResumes(snapshot: ThreadSnapshot, runId: string): ActionRow[] {
  return snapshot.actions.filter(
    (action) =>
      action.runId === runId &&
      action.kind === "suspend" &&
      action.state === "submitted" &&
      action.resumeQueued === true,
  );
}

/**
 * Records calls started by a process that died as interrupted; they are never re-run. `keep`:
 * calls this process runs, which are not leftovers.
 */
export function decideInterrupt(
  snapshot: ThreadSnapshot,
  runId: string,
  now: string,
  keep?: ReadonlySet<string>,
): Decision {
  return fromTransition(
    interruptUnsettled(snapshot, { runId, now, ...(keep ? { keep } : {}) }),
    [],
    undefined,
  );
}

/**
 * A driver claims a queued resume before re-entering the tool, in a commit fenced by its lease:
 * if it dies after this, the call is interrupted like any other call of a dead process.
 */
export function decideClaimResume(snapshot: ThreadSnapshot, actionId: string): Decision<ActionRow> {
  const action = snapshot.actions.find((candidate) => candidate.actionId === actionId);
  if (action?.state !== "submitted" || action.resumeQueued !== true) {
    return rejected("CONFLICT", `The resume of action ${actionId} was already claimed.`);
  }
  const claimed: ActionRow = { ...action, resumeQueued: false };
  return decided([{ type: "action-upserted", action: claimed }], [], claimed);
}

/** Parks a running run whose remaining work is all pending actions (re-checked on current state). */
export function decidePark(snapshot: ThreadSnapshot, runId: string, now: string): Decision {
  const { run, pending, unsettled } = analyzeRun(snapshot, runId);
  if (run?.status !== "running" || pending.length === 0 || unsettled.length > 0) {
    return decided([], run?.status === "waiting" ? [{ type: "run-parked", runId }] : [], undefined);
  }
  return fromTransition(
    setRunStatus(snapshot, { runId, status: "waiting", now }),
    [{ type: "run-parked", runId }],
    undefined,
  );
}

/** Ends an active run as completed or failed; a run that already ended only releases what this process holds. */
export function decideFinish(
  snapshot: ThreadSnapshot,
  input: { runId: string; status: "completed" | "failed"; error: string | null },
  now: string,
): Decision<{ ended: boolean }> {
  const run = snapshot.runs.find((candidate) => candidate.runId === input.runId);
  if (!run || (run.status !== "running" && run.status !== "waiting")) {
    return decided([], [{ type: "run-released", runId: input.runId }], { ended: false });
  }
  return fromTransition(
    setRunStatus(snapshot, { runId: input.runId, status: input.status, error: input.error, now }),
    [{ type: "run-ended", runId: input.runId, status: input.status, error: input.error }],
    { ended: true },
  );
}

/** Cancels the thread's active run, if any: pending work becomes model-visible cancellations. */
export function decideCancelActiveRun(
  snapshot: ThreadSnapshot,
  reason: string | null,
  now: string,
): Decision<{ runId: string | null }> {
  const run = activeRun(snapshot);
  if (!run) return decided([], [], { runId: null });
  return fromTransition(
    cancelRun(snapshot, { runId: run.runId, reason, now }),
    [{ type: "run-ended", runId: run.runId, status: "cancelled", error: null }],
    { runId: run.runId },
  );
}

export type { StoredToolPart };

/**
 * Whether a recovery pass sends the job of a `running` run nobody holds the lease of, on a job
 * engine. Such a run is either waiting in the engine's queue (an API instance committed it and
 * sent its job) or was driven by a worker that died. Both have made no progress for a lease
 * length once it is worth sending again: a dead worker's lease expired at least that long after
 * its last commit, and a run that waited that long in the queue may have lost its job (a crash
 * between commit and send). Each process sends one at most once per lease length.
 */
export function shouldResendRun(
  run: Pick<RunRow, "status" | "updatedAt">,
  input: { now: number; leaseMs: number; lastSentAt: number | null },
): boolean {
  if (run.status !== "running") return false;
  if (input.now - Date.parse(run.updatedAt) < input.leaseMs) return false;
  return input.lastSentAt === null || input.now - input.lastSentAt >= input.leaseMs;
}
