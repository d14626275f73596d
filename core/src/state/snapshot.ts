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

/**
 * Replaces the row `same` matches, or inserts it in `order` (`rows` are in that order, and a
 * replaced row keeps its place: a message's position never changes). Steps write the newest
 * rows, so the search runs from the end and an insert past the last row appends without
 * sorting: a step on a long thread stays cheap.
 */
function upsertBy<T>(rows: T[], row: T, same: (a: T, b: T) => boolean, order?: (a: T, b: T) => number): T[] {
  const last = rows[rows.length - 1];
  // A row that sorts strictly after the last one is new (a row keeps its order key), so a new
  // message on a long thread is appended without looking through the others.
  if (order && last !== undefined && order(last, row) < 0) return appended(rows, row);
  const index = rows.findLastIndex((existing) => same(existing, row));
  if (index !== -1) {
    const next = rows.slice();
    next[index] = row;
    return next;
  }
  if (!order || last === undefined || order(last, row) <= 0) return appended(rows, row);
  // Stable like a sort of the appended array: the row goes after every row that does not sort after it.
  let at = rows.length;
  while (at > 0 && order(rows[at - 1] as T, row) > 0) at--;
  const next = rows.slice();
  next.splice(at, 0, row);
  return next;
}

/**
 * `rows` and then `row`. `concat` allocates the copy once at its final length: half the time of
 * a spread or a copy and a push on a 1,000-row list, which grew its copy again.
 */
function appended<T>(rows: readonly T[], row: T): T[] {
  return rows.concat([row]);
}

/** Applies one event to a snapshot (pure). */
export function applyThreadEvent(snapshot: ThreadSnapshot, event: ThreadEvent): ThreadSnapshot {
  switch (event.type) {
    case "thread-updated":
      return { ...snapshot, thread: { ...event.thread, version: snapshot.thread.version } };
    case "message-upserted": {
      const messages = upsertBy(
        snapshot.messages,
        event.message,
        (a, b) => a.messageId === b.messageId,
        (a, b) => a.position - b.position,
      );
      return { ...snapshot, messages };
    }
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

/** Applies a batch of events to a snapshot (pure). */
export function applyThreadEvents(base: ThreadSnapshot, events: readonly ThreadEvent[]): ThreadSnapshot {
  let after = base;
  for (const event of events) after = applyThreadEvent(after, event);
  return after;
}

/** Applies one committed version; the snapshot's thread version becomes that version. */
export function applyStoredEvents(snapshot: ThreadSnapshot, committed: StoredThreadEvents): ThreadSnapshot {
  return atVersion(applyThreadEvents(snapshot, committed.events), committed);
}

/** `after`, the projection of a committed version's events, stamped with that version. */
export function atVersion(
  after: ThreadSnapshot,
  committed: Pick<StoredThreadEvents, "version" | "createdAt">,
): ThreadSnapshot {
  return {
    ...after,
    thread: { ...after.thread, version: committed.version, updatedAt: committed.createdAt },
  };
}
