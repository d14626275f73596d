import type { UploadedFile } from "../ports/files.js";
import type { ThreadEvent } from "./events.js";
import { projectThreadState, type ThreadStateView } from "./project-thread-state.js";
import type { ActionRow, RunRow, ThreadRow } from "./rows.js";
import type { ThreadSnapshot } from "./snapshot.js";

/**
 * What a client may see of the stored rows. A client never needs the tenant key (it only ever
 * sees its own tenant), another request's identity (runs keep it for recovery; it can hold
 * whatever the host put in its identity) or the idempotency key another caller chose.
 */
export type ClientThreadRow = Omit<ThreadRow, "scopeKey">;
export type ClientRunRow = Omit<RunRow, "identity">;
export type ClientActionRow = Omit<ActionRow, "scopeKey" | "idempotencyKey">;
export type ClientUploadedFile = Omit<UploadedFile, "scopeKey">;

export type ClientThreadSnapshot = Omit<ThreadSnapshot, "thread" | "runs" | "actions"> & {
  thread: ClientThreadRow;
  runs: ClientRunRow[];
  actions: ClientActionRow[];
};

export type ClientThreadEvent =
  | { type: "thread-updated"; thread: ClientThreadRow }
  | { type: "run-upserted"; run: ClientRunRow }
  | { type: "action-upserted"; action: ClientActionRow }
  | Extract<ThreadEvent, { type: "message-upserted" | "tool-data-upserted" }>;

export function toClientThread(row: ThreadRow): ClientThreadRow {
  const { scopeKey: _scopeKey, ...rest } = row;
  return rest;
}

export function toClientFile(file: UploadedFile): ClientUploadedFile {
  const { scopeKey: _scopeKey, ...rest } = file;
  return rest;
}

export function toClientRun(row: RunRow): ClientRunRow {
  const { identity: _identity, ...rest } = row;
  return rest;
}

export function toClientAction(row: ActionRow): ClientActionRow {
  const { scopeKey: _scopeKey, idempotencyKey: _idempotencyKey, ...rest } = row;
  return rest;
}

export function toClientSnapshot(snapshot: ThreadSnapshot): ClientThreadSnapshot {
  return {
    ...snapshot,
    thread: toClientThread(snapshot.thread),
    runs: snapshot.runs.map(toClientRun),
    actions: snapshot.actions.map(toClientAction),
  };
}

export function toClientEvent(event: ThreadEvent): ClientThreadEvent {
  switch (event.type) {
    case "thread-updated":
      return { type: event.type, thread: toClientThread(event.thread) };
    case "run-upserted":
      return { type: event.type, run: toClientRun(event.run) };
    case "action-upserted":
      return { type: event.type, action: toClientAction(event.action) };
    default:
      return event;
  }
}

/** A thread as a client renders it: native UI messages with PAI sidecars, the run, pending actions. */
export type ClientThreadView = Omit<ThreadStateView, "thread" | "run"> & {
  thread: ClientThreadRow;
  run: ClientRunRow | null;
};

/** The client view of a thread's stored rows (`projectThreadState` without internal fields). */
export function toClientView(snapshot: ThreadSnapshot): ClientThreadView {
  const view = projectThreadState(snapshot);
  return { ...view, thread: toClientThread(view.thread), run: view.run ? toClientRun(view.run) : null };
}
