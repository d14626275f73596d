import type { UIMessage } from "ai";
import type { JsonObject, JsonValue } from "../json/json-value.js";

/**
 * Persisted rows of one thread. Every row is plain JSON so a thread can be loaded by any
 * process; nothing here holds a closure, class instance or client.
 */

export type ThreadStatus = "idle" | "running" | "waiting";

export type ThreadRow = {
  threadId: string;
  scopeKey: string;
  userKey: string | null;
  agentId: string;
  title: string | null;
  status: ThreadStatus;
  /** Bumped by storage on every commit; the expected version of the next commit. */
  version: number;
  /** The run currently running or waiting, if any. */
  activeRunId: string | null;
  metadata: JsonObject | null;
  createdAt: string;
  updatedAt: string;
  /**
   * The earliest instant something is due on this thread (a pending action's deadline, an
   * active schedule's next firing), kept by the runtime on every commit so storage can list
   * due threads with one indexed query. Absent or null: nothing is due.
   */
  wakeAt?: string | null;
  /** Scheduled triggers of this thread (active ones, and the last few that ended). */
  schedules?: ScheduleRow[] | null;
};

/** When a schedule fires: once at an instant, or on a cron expression (5 fields, in `timezone`). */
export type ScheduleTiming = { at: string } | { cron: string; timezone?: string };

/**
 * A scheduled trigger: at its time the thread gets a run whose model reads `message` (as the
 * triggers of `threads.trigger` do). Created through the trusted API or `ctx.trigger` with a time.
 */
export type ScheduleRow = {
  scheduleId: string;
  timing: ScheduleTiming;
  /** What the model reads when it fires. */
  message: string;
  data: JsonValue | null;
  state: "active" | "done" | "cancelled";
  /** The next firing (null once done or cancelled). */
  nextAt: string | null;
  /** Firings so far; each firing commits exactly once (it is fenced by the thread version). */
  fired: number;
  lastFiredAt: string | null;
  createdAt: string;
  cancelledAt: string | null;
};

/** An AI SDK v7 UI message as stored: native parts only, no PAI sidecars. */
export type StoredMessage = UIMessage<unknown>;

export type MessageRow = {
  threadId: string;
  messageId: string;
  /** Ordering key inside the thread; strictly increasing. */
  position: number;
  role: "system" | "user" | "assistant";
  message: StoredMessage;
  /** The run that appended this message (null for user messages outside a run). */
  runId: string | null;
  createdAt: string;
  updatedAt: string;
};

export type RunStatus = "queued" | "running" | "waiting" | "completed" | "failed" | "cancelled";

/** A snapshot of frontend-defined client tools sent with a request (spec 03). */
export type ClientToolSnapshot = {
  name: string;
  description: string;
  inputSchema: JsonObject;
  outputSchema?: JsonObject;
};

export type RunTrigger =
  | { type: "message"; messageId: string }
  | { type: "action"; actionId: string }
  | { type: "trigger"; messageId: string | null; notification?: string; data?: JsonValue; hidden?: boolean };

export type RunRow = {
  threadId: string;
  runId: string;
  status: RunStatus;
  trigger: RunTrigger;
  /** Number of model steps committed so far. */
  step: number;
  /** The open tail assistant message this run appends to. */
  messageId: string | null;
  clientTools: ClientToolSnapshot[];
  /** Untrusted request data passed to resolvers; never authorization. */
  clientData: JsonValue | null;
  /**
   * Identity of the request that last started or continued the run, kept so another
   * process (after a restart or lease expiry) can resolve the same runtime context.
   */
  identity?: JsonValue | null;
  /**
   * For a queued run: the message that will start it, appended only when the run starts so
   * the active run's model never sees it early.
   */
  queuedMessage?: MessageRow | null;
  error: string | null;
  createdAt: string;
  updatedAt: string;
  finishedAt: string | null;
};

export type ActionState = "pending" | "submitted" | "cancelled" | "failed";

/** A pending action: a named suspension (`kind: "suspend"`) or client/external output (`kind: "output"`). */
export type ActionRow = {
  threadId: string;
  /** Unique inside the thread. For output actions it is the tool call id. */
  actionId: string;
  scopeKey: string;
  runId: string;
  messageId: string;
  toolCallId: string;
  toolName: string;
  kind: "suspend" | "output";
  suspendName: string | null;
  /** Fully qualified: `tool.suspendName` or `tool.output`. */
  name: string;
  input: JsonValue | null;
  state: ActionState;
  /** Per tool call, 1-based: the order of suspension episodes. */
  episode: number;
  createdAt: string;
  resolvedAt: string | null;
  /** Submitted payload (resume data or tool output). */
  resume: JsonValue | null;
  /** Cancellation reason or failure message. */
  reason: string | null;
  idempotencyKey: string | null;
  /**
   * A submitted suspension whose tool has not been re-entered yet: set when the answer was taken
   * by a process that does not drive runs (an API instance on a job engine), cleared by the
   * commit of the worker that re-enters the tool. A call whose resume was claimed and then lost
   * with its process is interrupted, never re-entered twice.
   */
  resumeQueued?: boolean;
  /** Thread version of the commit that resolved the action (lets an idempotent retry return it). */
  resolvedVersion?: number | null;
  /**
   * For a pending action with a deadline: when it passes, the action resolves as `onDeadline`
   * says, through the same exactly-once path as an answer (a late answer gets CONFLICT).
   */
  deadline?: ActionDeadline | null;
  /**
   * For a call of a frontend-defined client tool: the registration the call was made with, so the
   * call stays answerable (and its answer validated) whatever client tools later requests send.
   */
  clientTool?: ClientToolSnapshot | null;
};

/** What happens to a pending action when its deadline passes. */
export type ActionDeadline = {
  /** ISO instant. */
  at: string;
  /** `cancel` (the default) or `fail`; the model reads `reason` either way. */
  resolution: "cancel" | "fail";
  reason: string;
};

export type ToolDataRow = {
  threadId: string;
  toolCallId: string;
  channel: string;
  itemId: string;
  value: JsonValue;
  updatedAt: string;
};
