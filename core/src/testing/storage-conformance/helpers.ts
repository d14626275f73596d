// Pure helpers shared by the storage conformance groups: fixed timestamps, snapshot replay,
// ordering and pagination utilities, and JSON samples that break naive encodings.
import { expect } from "vitest";
import type { JsonObject, JsonValue } from "../../json/json-value.js";
import type { StorageCommitResult } from "../../ports/storage.js";
import type { StoredThreadEvents } from "../../state/events.js";
import type { MessageRow, ThreadRow } from "../../state/rows.js";
import { applyStoredEvents, type ThreadSnapshot } from "../../state/snapshot.js";

/** A fixed ISO timestamp `seconds` after 2026-01-01T00:00:00Z; the suite never reads a clock. */
export function at(seconds: number): string {
  return new Date(Date.UTC(2026, 0, 1) + seconds * 1000).toISOString();
}

export function withText(message: MessageRow["message"], text: string): MessageRow["message"] {
  return { ...message, parts: [{ type: "text", text }] };
}

/** Rebuilds a snapshot from a thread's whole log, starting from its first thread-updated event. */
export function replay(batches: StoredThreadEvents[]): ThreadSnapshot {
  const created = batches[0]?.events.find((event) => event.type === "thread-updated");
  if (!created) throw new Error("expected the first batch to contain a thread-updated event");
  let snapshot: ThreadSnapshot = {
    thread: { ...created.thread, version: 0 },
    messages: [],
    runs: [],
    actions: [],
    toolData: [],
  };
  for (const batch of batches) snapshot = applyStoredEvents(snapshot, batch);
  return snapshot;
}

export function expectOneWinner(results: StorageCommitResult[]) {
  expect(results.filter((result) => result.ok)).toHaveLength(1);
  for (const result of results) {
    if (!result.ok) expect(result.reason).toBe("conflict");
  }
}

export function byNewest(a: ThreadRow, b: ThreadRow): number {
  const time = Date.parse(b.updatedAt) - Date.parse(a.updatedAt);
  if (time !== 0) return time;
  return a.threadId < b.threadId ? -1 : a.threadId > b.threadId ? 1 : 0;
}

export function sortByRunId<T extends { runId: string }>(entries: T[]): T[] {
  return [...entries].sort((a, b) => (a.runId < b.runId ? -1 : a.runId > b.runId ? 1 : 0));
}

/** Follows `nextCursor` until it is null; fails instead of looping forever. */
export async function collectPages<TKey extends string, TItem>(
  fetchPage: (cursor: string | null) => Promise<{ [K in TKey]: TItem[] } & { nextCursor: string | null }>,
  key: TKey,
): Promise<TItem[][]> {
  const pages: TItem[][] = [];
  let cursor: string | null = null;
  do {
    const page = await fetchPage(cursor);
    pages.push(page[key]);
    cursor = page.nextCursor;
    if (pages.length > 100) throw new Error("pagination did not end after 100 pages");
  } while (cursor !== null);
  return pages;
}

/** Strings that trip up encodings: astral emoji, combining marks, RTL, escapes, quotes. */
export const tricky =
  'emoji 👩‍👩‍👧 e\u0301 עברית 漢字 "quoted" \\back\\slash\nnew line\ttab \u2028 </script>';

export function jsonSample(): JsonObject {
  const numbers: JsonValue[] = [0, 1, -1, Math.PI, 1e-7, 2 ** 53 - 1, -(2 ** 53 - 1), 1.5e300, 0.1];
  return {
    text: tricky,
    "ключ with spaces.and.dots": "ok",
    "🔑": { nested: { deeper: { deepest: [1, [2, [3, [4, { five: 5 }]]]] } } },
    numbers,
    nulls: [null, { inner: null }],
    booleans: [true, false],
    empty: { string: "", array: [], object: {} },
  };
}
