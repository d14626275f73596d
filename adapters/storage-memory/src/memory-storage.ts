import type {
  ActionRow,
  ListActionsInput,
  ListThreadsInput,
  MessageRow,
  RunLeaseInput,
  RunRow,
  StorageCapabilities,
  StorageCommit,
  StorageCommitResult,
  StorageV1,
  StoredThreadEvents,
  ThreadEvent,
  ThreadRow,
  ThreadSnapshot,
  ToolDataRow,
} from "@pai/core";
import { commitLeaseProblem, copyRows, PaiError } from "@pai/core";

export type MemoryStorageOptions = {
  /** Shown in error messages; defaults to `"memory"`. */
  name?: string;
};

type Lease = { owner: string; expiresAt: number };

/** Everything stored for one thread. Maps keep insertion order, which tool data relies on. */
type ThreadRecord = {
  thread: ThreadRow;
  messages: Map<string, MessageRow>;
  runs: Map<string, RunRow>;
  actions: Map<string, ActionRow>;
  /** Keyed by `toolDataKey`; an update keeps the item's first-write position. */
  toolData: Map<string, ToolDataRow>;
  events: StoredThreadEvents[];
};

const RECOVERABLE: ReadonlySet<RunRow["status"]> = new Set(["running", "queued"]);

/**
 * A `StorageV1` kept in this process's memory: for tests, the playground and single-process
 * apps that can lose state on restart. Every row is deep-copied on the way in and out
 * (`copyRows`), so callers can never mutate stored state, and a commit validates everything
 * before it writes anything.
 *
 * @example
 * import { memoryStorage } from "@pai/storage-memory";
 *
 * const storage = memoryStorage();
 * const snapshot = await storage.loadThread({ threadId: "t1" }); // null until a commit creates it
 */
export function memoryStorage(options: MemoryStorageOptions = {}): StorageV1 {
  const name = options.name ?? "memory";
  const threads = new Map<string, ThreadRecord>();
  // Kept apart from the run rows: a lease may be taken before the run's first commit, and
  // upserting a run never touches its lease.
  const leases = new Map<string, Lease>();
  const leaseKey = (threadId: string, runId: string) => JSON.stringify([threadId, runId]);
  const capabilities: StorageCapabilities = { sharedAcrossProcesses: false, listenNotify: false };

  const invalid = (message: string): never => {
    throw new PaiError("INVALID_INPUT", `${name} storage: ${message}`);
  };

  const time = (value: string, label: string): number => {
    const parsed = Date.parse(value);
    if (Number.isNaN(parsed)) invalid(`${label} must be an ISO timestamp, got ${JSON.stringify(value)}.`);
    return parsed;
  };

  const checkLimit = (limit: number, label: string) => {
    if (!Number.isInteger(limit) || limit < 1)
      invalid(`${label} limit must be a positive integer, got ${limit}.`);
  };

  /** Rejects events that would write rows of another thread; throws before anything is written. */
  const validateCommit = (input: StorageCommit) => {
    if (!Number.isInteger(input.expectedVersion) || input.expectedVersion < 0) {
      invalid(`expectedVersion must be a non-negative integer, got ${input.expectedVersion}.`);
    }
    time(input.now, "commit.now");
    for (const event of input.events) {
      const rowThreadId = threadIdOf(event);
      if (rowThreadId !== input.threadId) {
        invalid(
          `a ${event.type} event for thread "${rowThreadId}" was committed to thread "${input.threadId}". Commit each thread's rows separately.`,
        );
      }
    }
    const leaseProblem = commitLeaseProblem(input);
    if (leaseProblem) invalid(leaseProblem);
    if (input.expectedVersion === 0 && !input.events.some((event) => event.type === "thread-updated")) {
      invalid(
        `creating thread "${input.threadId}" (expectedVersion 0) needs a thread-updated event in the commit.`,
      );
    }
  };

  const snapshotOf = (record: ThreadRecord): ThreadSnapshot =>
    copyRows({
      thread: record.thread,
      messages: [...record.messages.values()].sort((a, b) => a.position - b.position),
      // Array#sort is stable, so equal timestamps keep insertion order.
      runs: [...record.runs.values()].sort((a, b) => Date.parse(a.createdAt) - Date.parse(b.createdAt)),
      actions: [...record.actions.values()].sort(
        (a, b) => Date.parse(a.createdAt) - Date.parse(b.createdAt) || a.episode - b.episode,
      ),
      toolData: [...record.toolData.values()],
    });

  return {
    specificationVersion: "v1",
    name,
    capabilities,

    async commit(input: StorageCommit): Promise<StorageCommitResult> {
      validateCommit(input);
      const existing = threads.get(input.threadId);
      const currentVersion = existing ? existing.thread.version : null;
      if (input.expectedVersion === 0 ? existing : currentVersion !== input.expectedVersion) {
        return { ok: false, reason: "conflict", currentVersion };
      }

      // Validation is done; from here on nothing throws and nothing awaits, so the commit is atomic.
      // Stored rows may share objects with the logged events: neither is mutated in place and
      // every read hands out a copy.
      const events = copyRows(input.events);
      const version = input.expectedVersion + 1;
      const record = existing ?? emptyRecord(events);
      for (const event of events) applyEvent(record, event);
      record.thread = { ...record.thread, version, updatedAt: input.now };
      record.events.push({ threadId: input.threadId, version, events, createdAt: input.now });
      threads.set(input.threadId, record);
      if (input.lease) {
        leases.set(leaseKey(input.threadId, input.lease.runId), {
          owner: input.lease.owner,
          expiresAt: Date.parse(input.lease.expiresAt),
        });
      }
      return { ok: true, version };
    },

    async loadThread({ threadId }) {
      const record = threads.get(threadId);
      return record ? snapshotOf(record) : null;
    },

    async listThreads(input: ListThreadsInput) {
      checkLimit(input.limit, "listThreads");
      const rows = [...threads.values()]
        .map((record) => record.thread)
        .filter((thread) => thread.scopeKey === input.scopeKey)
        .filter((thread) => input.agentId === undefined || thread.agentId === input.agentId)
        .sort(compareThreads);
      const after = input.cursor ? decodeCursor(input.cursor, ["updatedAt", "threadId"], invalid) : null;
      const start = after ? rows.findIndex((thread) => compareThreads(thread, after) > 0) : 0;
      const result = page(rows, start, input.limit, (thread) => ({
        updatedAt: thread.updatedAt,
        threadId: thread.threadId,
      }));
      return { threads: result.items, nextCursor: result.nextCursor };
    },

    async readEvents({ threadId, afterVersion, limit }) {
      if (limit !== undefined) checkLimit(limit, "readEvents");
      const log = threads.get(threadId)?.events ?? [];
      // The log is in version order: a refresh of a long thread reads its tail, not the whole log.
      let start = 0;
      let end = log.length;
      while (start < end) {
        const middle = (start + end) >>> 1;
        if (log[middle]!.version > afterVersion) end = middle;
        else start = middle + 1;
      }
      const selected = log.slice(start);
      return copyRows(limit === undefined ? selected : selected.slice(0, limit));
    },

    async getAction({ threadId, actionId }) {
      const action = threads.get(threadId)?.actions.get(actionId);
      return action ? copyRows(action) : null;
    },

    async listActions(input: ListActionsInput) {
      checkLimit(input.limit, "listActions");
      const rows: ActionRow[] = [];
      for (const record of threads.values()) {
        for (const action of record.actions.values()) {
          if (action.scopeKey !== input.scopeKey) continue;
          if (input.state !== undefined && action.state !== input.state) continue;
          rows.push(action);
        }
      }
      rows.sort(compareActions);
      const after = input.cursor
        ? decodeCursor(input.cursor, ["createdAt", "threadId", "actionId"], invalid)
        : null;
      const start = after ? rows.findIndex((action) => compareActions(action, after) > 0) : 0;
      const result = page(rows, start, input.limit, (action) => ({
        createdAt: action.createdAt,
        threadId: action.threadId,
        actionId: action.actionId,
      }));
      return { actions: result.items, nextCursor: result.nextCursor };
    },

    async acquireRunLease(input: RunLeaseInput) {
      const now = time(input.now, "acquireRunLease.now");
      const expiresAt = time(input.expiresAt, "acquireRunLease.expiresAt");
      const key = leaseKey(input.threadId, input.runId);
      const held = leases.get(key);
      if (held && held.owner !== input.owner && held.expiresAt > now) return false;
      leases.set(key, { owner: input.owner, expiresAt });
      return true;
    },

    async releaseRunLease({ threadId, runId, owner }) {
      const key = leaseKey(threadId, runId);
      if (leases.get(key)?.owner === owner) leases.delete(key);
    },

    async listDueThreads(input) {
      const now = time(input.now, "listDueThreads.now");
      checkLimit(input.limit, "listDueThreads");
      const due: Array<{ threadId: string; wakeAt: string; time: number }> = [];
      for (const { thread } of threads.values()) {
        if (typeof thread.wakeAt !== "string") continue;
        const wake = Date.parse(thread.wakeAt);
        if (wake <= now) due.push({ threadId: thread.threadId, wakeAt: thread.wakeAt, time: wake });
      }
      return due
        .sort((a, b) => a.time - b.time || compareStrings(a.threadId, b.threadId))
        .slice(0, input.limit)
        .map(({ threadId, wakeAt }) => ({ threadId, wakeAt }));
    },

    async listRecoverableRuns(input) {
      const now = time(input.now, "listRecoverableRuns.now");
      checkLimit(input.limit, "listRecoverableRuns");
      const candidates: RunRow[] = [];
      for (const record of threads.values()) {
        for (const run of record.runs.values()) {
          if (!RECOVERABLE.has(run.status)) continue;
          const lease = leases.get(leaseKey(run.threadId, run.runId));
          if (lease && lease.expiresAt > now) continue;
          candidates.push(run);
        }
      }
      return candidates
        .sort((a, b) => Date.parse(a.createdAt) - Date.parse(b.createdAt))
        .slice(0, input.limit)
        .map((run) => ({ threadId: run.threadId, runId: run.runId }));
    },
  };
}

/** A new thread's record; `commit` validated that `events` holds a thread-updated event. */
function emptyRecord(events: ThreadEvent[]): ThreadRecord {
  const created = events.findLast((event) => event.type === "thread-updated");
  if (!created) throw new Error("unreachable: a creating commit without thread-updated passed validation");
  return {
    thread: storedThread(created.thread),
    messages: new Map(),
    runs: new Map(),
    actions: new Map(),
    toolData: new Map(),
    events: [],
  };
}

/**
 * The thread row as stored: a null or undefined `wakeAt` or `schedules` is dropped. SQL adapters
 * cannot tell null from absent, so every adapter reads both back only when set. A copy, since the row
 * is shared with the logged event, which must read back as written.
 */
function storedThread(thread: ThreadRow): ThreadRow {
  const unset = (key: "wakeAt" | "schedules") => key in thread && thread[key] == null;
  if (!unset("wakeAt") && !unset("schedules")) return thread;
  const { wakeAt, schedules, ...rest } = thread;
  const stored: ThreadRow = rest;
  if (wakeAt != null) stored.wakeAt = wakeAt;
  if (schedules != null) stored.schedules = schedules;
  return stored;
}

function threadIdOf(event: ThreadEvent): string {
  switch (event.type) {
    case "thread-updated":
      return event.thread.threadId;
    case "message-upserted":
      return event.message.threadId;
    case "run-upserted":
      return event.run.threadId;
    case "action-upserted":
      return event.action.threadId;
    case "tool-data-upserted":
      return event.item.threadId;
  }
}

function toolDataKey(item: ToolDataRow): string {
  return JSON.stringify([item.toolCallId, item.channel, item.itemId]);
}

/** Same row semantics as `applyThreadEvent` in core. */
function applyEvent(record: ThreadRecord, event: ThreadEvent): void {
  switch (event.type) {
    case "thread-updated":
      record.thread = storedThread(event.thread);
      return;
    case "message-upserted":
      record.messages.set(event.message.messageId, event.message);
      return;
    case "run-upserted":
      record.runs.set(event.run.runId, event.run);
      return;
    case "action-upserted":
      record.actions.set(event.action.actionId, event.action);
      return;
    case "tool-data-upserted":
      record.toolData.set(toolDataKey(event.item), event.item);
      return;
  }
}

function compareStrings(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** Newest `updatedAt` first, then `threadId` ascending. */
function compareThreads(
  a: Pick<ThreadRow, "updatedAt" | "threadId">,
  b: Pick<ThreadRow, "updatedAt" | "threadId">,
) {
  return Date.parse(b.updatedAt) - Date.parse(a.updatedAt) || compareStrings(a.threadId, b.threadId);
}

/** Oldest `createdAt` first, then `threadId`, then `actionId`: a total order for stable pages. */
function compareActions(
  a: Pick<ActionRow, "createdAt" | "threadId" | "actionId">,
  b: Pick<ActionRow, "createdAt" | "threadId" | "actionId">,
) {
  return (
    Date.parse(a.createdAt) - Date.parse(b.createdAt) ||
    compareStrings(a.threadId, b.threadId) ||
    compareStrings(a.actionId, b.actionId)
  );
}

/**
 * Cuts one page from sorted rows starting at `start` (-1 means past the end). The cursor
 * holds the sort key of the page's last row, so rows added or removed between pages never
 * cause duplicates.
 */
function page<T>(rows: T[], start: number, limit: number, keyOf: (row: T) => Record<string, string>) {
  const from = start === -1 ? rows.length : start;
  const slice = rows.slice(from, from + limit);
  const hasMore = from + limit < rows.length;
  const last = slice[slice.length - 1];
  return {
    items: copyRows(slice),
    nextCursor:
      hasMore && last !== undefined ? Buffer.from(JSON.stringify(keyOf(last))).toString("base64url") : null,
  };
}

function decodeCursor<TKey extends string>(
  cursor: string,
  keys: readonly TKey[],
  invalid: (message: string) => never,
): Record<TKey, string> {
  try {
    const decoded: unknown = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8"));
    if (decoded && typeof decoded === "object") {
      const record = decoded as Record<string, unknown>;
      if (keys.every((key) => typeof record[key] === "string")) return record as Record<TKey, string>;
    }
  } catch {
    // Reported below with the same message as a well-formed but foreign cursor.
  }
  return invalid(
    `the cursor "${cursor}" is not one this storage returned. Pass nextCursor from the previous page.`,
  );
}
