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
  /** Thread version of the commit that resolved the action (lets an idempotent retry return it). */
  resolvedVersion?: number | null;
  /**
   * For a call of a frontend-defined client tool: the registration the call was made with, so the
   * call stays answerable (and its answer validated) whatever client tools later requests send.
   */
  clientTool?: ClientToolSnapshot | null;
};

export type ToolDataRow = {
  threadId: string;
  toolCallId: string;
  channel: string;
  itemId: string;
  value: JsonValue;
  updatedAt: string;
};
