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
 * sorting: a step on a long thread stays cheap. Returns the new list and how many leading rows
 * it shares with `rows`.
 */
function upsertBy<T>(
  rows: T[],
  row: T,
  same: (a: T, b: T) => boolean,
  order?: (a: T, b: T) => number,
): { next: T[]; kept: number } {
  const last = rows[rows.length - 1];
  // A row that sorts strictly after the last one is new (a row keeps its order key), so a new
  // message on a long thread is appended without looking through the others.
  if (order && last !== undefined && order(last, row) < 0)
    return { next: appended(rows, row), kept: rows.length };
  const index = rows.findLastIndex((existing) => same(existing, row));
  if (index !== -1) {
    const next = rows.slice();
    next[index] = row;
    return { next, kept: index };
  }
  if (!order || last === undefined || order(last, row) <= 0)
    return { next: appended(rows, row), kept: rows.length };
  // Stable like a sort of the appended array: the row goes after every row that does not sort after it.
  let at = rows.length;
  while (at > 0 && order(rows[at - 1] as T, row) > 0) at--;
  const next = rows.slice();
  next.splice(at, 0, row);
  return { next, kept: at };
}

/**
 * `rows` and then `row`. `concat` allocates the copy once at its final length: half the time of
 * a spread or a copy and a push on a 1,000-row list, which grew its copy again.
 */
function appended<T>(rows: readonly T[], row: T): T[] {
  return rows.concat([row]);
}

/**
 * Where each message list came from: the list it was made from and how many leading rows the
 * two share. Kept weakly, by the newer list, and the older list is held by a weak reference: a
 * thread's current list must not keep every earlier version of itself alive. A reader that
 * kept an earlier list of the same thread (the model history) learns what is unchanged in a few
 * lookups instead of comparing a long thread row by row: on a heap holding many threads, that
 * comparison read two cold arrays of a thousand references, twice a turn.
 */
const messageLineage = new WeakMap<readonly unknown[], { from: WeakRef<readonly unknown[]>; kept: number }>();

/** The furthest a lineage is followed: a reader further behind than this compares instead. */
const MAX_LINEAGE_HOPS = 32;

/**
 * How many leading rows `rows` shares with `earlier` (the same row objects), when `rows` was
 * made from `earlier` by message upserts; `undefined` when their lineage does not say (a list
 * made otherwise, too many upserts apart, or a list in between already collected).
 */
export function sharedMessagePrefix(
  rows: readonly unknown[],
  earlier: readonly unknown[],
): number | undefined {
  let kept = rows.length;
  let list: readonly unknown[] | undefined = rows;
  for (let hop = 0; hop <= MAX_LINEAGE_HOPS && list !== undefined; hop++) {
    if (list === earlier) return Math.min(kept, earlier.length);
    const link = messageLineage.get(list);
    if (link === undefined) return undefined;
    kept = Math.min(kept, link.kept);
    list = link.from.deref();
  }
  return undefined;
}

/** Applies one event to a snapshot (pure). */
export function applyThreadEvent(snapshot: ThreadSnapshot, event: ThreadEvent): ThreadSnapshot {
  switch (event.type) {
    case "thread-updated":
      return { ...snapshot, thread: { ...event.thread, version: snapshot.thread.version } };
    case "message-upserted": {
      const { next, kept } = upsertBy(
        snapshot.messages,
        event.message,
        (a, b) => a.messageId === b.messageId,
        (a, b) => a.position - b.position,
      );
      messageLineage.set(next, { from: new WeakRef(snapshot.messages), kept });
      return { ...snapshot, messages: next };
    }
    case "run-upserted":
      return { ...snapshot, runs: upsertBy(snapshot.runs, event.run, (a, b) => a.runId === b.runId).next };
    case "action-upserted":
      return {
        ...snapshot,
        actions: upsertBy(snapshot.actions, event.action, (a, b) => a.actionId === b.actionId).next,
      };
    case "tool-data-upserted":
      return {
        ...snapshot,
        toolData: upsertBy(
          snapshot.toolData,
          event.item,
          (a, b) => a.toolCallId === b.toolCallId && a.channel === b.channel && a.itemId === b.itemId,
        ).next,
      };
  }
}

/**
 * The last projection of each event batch: from which snapshot, at what length, to what.
 * A commit's events are projected several times on their way to storage (the decider checks
 * where they lead, the writer computes the thread's next wake, the store keeps the result), and
 * each projection of a message copied the thread's message list: 20 µs a turn at 1,000
 * messages. Snapshots and batches are not changed once built, so a batch projected again from
 * the same snapshot gets the same result back; held weakly, by the batch.
 */
const projections = new WeakMap<
  readonly ThreadEvent[],
  { base: ThreadSnapshot; length: number; after: ThreadSnapshot }
>();

/** Applies a batch of events to a snapshot (pure; a batch already projected from `base` is not applied again). */
export function applyThreadEvents(base: ThreadSnapshot, events: readonly ThreadEvent[]): ThreadSnapshot {
  const known = projections.get(events);
  if (known !== undefined && known.base === base && known.length === events.length) return known.after;
  let after = base;
  for (const event of events) after = applyThreadEvent(after, event);
  knownProjection(base, events, after);
  return after;
}

/**
 * Records what a batch leads to when its builder already knows it (a batch made of a projected
 * batch and a few more events), so the next projection of it is not computed again.
 */
export function knownProjection(
  base: ThreadSnapshot,
  events: readonly ThreadEvent[],
  after: ThreadSnapshot,
): void {
  projections.set(events, { base, length: events.length, after });
}

/**
 * `events` followed by `more`, as one new batch whose projection from `base` is recorded from
 * the projection of `events` (`after`), so only `more` is applied.
 */
export function extendBatch(
  base: ThreadSnapshot,
  events: readonly ThreadEvent[],
  after: ThreadSnapshot,
  more: readonly ThreadEvent[],
): ThreadEvent[] {
  const extended = [...events, ...more];
  knownProjection(base, extended, applyThreadEvents(after, more));
  return extended;
}

/** Applies one committed version; the snapshot's thread version becomes that version. */
export function applyStoredEvents(snapshot: ThreadSnapshot, committed: StoredThreadEvents): ThreadSnapshot {
  const next = applyThreadEvents(snapshot, committed.events);
  return { ...next, thread: { ...next.thread, version: committed.version, updatedAt: committed.createdAt } };
}
