import type { StoredThreadEvents, ThreadEvent } from "./events.js";
import type { ActionRow, MessageRow, RunRow, ThreadRow, ToolDataRow } from "./rows.js";

/** Everything stored for one thread, as one snapshot read returns it. */
export type ThreadSnapshot = {
  thread: ThreadRow;
  /** Ordered by `position`. */
  messages: MessageRow[];
  /** Ordered by `createdAt`. */
  runs: RunRow[];
  /** Ordered by `createdAt`, then `episode`. */
  actions: ActionRow[];
  /** Ordered by `updatedAt` of first write (insertion order). */
  toolData: ToolDataRow[];
};

function upsertBy<T>(rows: T[], row: T, same: (a: T, b: T) => boolean, order?: (a: T, b: T) => number): T[] {
  const index = rows.findIndex((existing) => same(existing, row));
  if (index === -1) {
    const next = [...rows, row];
    return order ? next.sort(order) : next;
  }
  const next = rows.slice();
  next[index] = row;
  return next;
}

/** Applies one event to a snapshot (pure). */
export function applyThreadEvent(snapshot: ThreadSnapshot, event: ThreadEvent): ThreadSnapshot {
  switch (event.type) {
    case "thread-updated":
      return { ...snapshot, thread: { ...event.thread, version: snapshot.thread.version } };
    case "message-upserted":
      return {
        ...snapshot,
        messages: upsertBy(
          snapshot.messages,
          event.message,
          (a, b) => a.messageId === b.messageId,
          (a, b) => a.position - b.position,
        ),
      };
    case "run-upserted":
      return { ...snapshot, runs: upsertBy(snapshot.runs, event.run, (a, b) => a.runId === b.runId) };
    case "action-upserted":
      return {
        ...snapshot,
        actions: upsertBy(snapshot.actions, event.action, (a, b) => a.actionId === b.actionId),
      };
    case "tool-data-upserted":
      return {
        ...snapshot,
        toolData: upsertBy(
          snapshot.toolData,
          event.item,
          (a, b) => a.toolCallId === b.toolCallId && a.channel === b.channel && a.itemId === b.itemId,
        ),
      };
  }
}

/** Applies one committed version; the snapshot's thread version becomes that version. */
export function applyStoredEvents(snapshot: ThreadSnapshot, committed: StoredThreadEvents): ThreadSnapshot {
  let next = snapshot;
  for (const event of committed.events) next = applyThreadEvent(next, event);
  return { ...next, thread: { ...next.thread, version: committed.version, updatedAt: committed.createdAt } };
}
