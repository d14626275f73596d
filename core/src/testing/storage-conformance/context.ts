// What every storage conformance group is handed: the storage under test, run-unique ids, and
// commit/load shortcuts that assert success so each test states only what it proves.
import { expect } from "vitest";
import type { StorageCommitResult, StorageV1 } from "../../ports/storage.js";
import type { ThreadEvent } from "../../state/events.js";
import type { ThreadRow } from "../../state/rows.js";
import type { ThreadSnapshot } from "../../state/snapshot.js";
import { at } from "./helpers.js";

export type ConformanceContext = {
  /** The storage under test; throws if `create` failed, so the real error stays in beforeAll. */
  storage: () => StorageV1;
  /** An id unique to this run, so the suite can share a non-empty database. */
  id: (label: string) => string;
  commit: (
    threadId: string,
    expectedVersion: number,
    events: ThreadEvent[],
    now: string,
  ) => Promise<StorageCommitResult>;
  /** Commits and asserts success; returns the new version. */
  commitOk: (
    threadId: string,
    expectedVersion: number,
    events: ThreadEvent[],
    now: string,
  ) => Promise<number>;
  /** Creates a thread (version 1) with optional extra events in the same commit. */
  createThread: (thread: ThreadRow, extra?: ThreadEvent[], now?: string) => Promise<ThreadRow>;
  /** Loads a thread that must exist. */
  load: (threadId: string) => Promise<ThreadSnapshot>;
  /** The recoverable runs of one thread at `now`: other suites may share the database. */
  recoverableOf: (threadId: string, now: number) => Promise<Array<{ threadId: string; runId: string }>>;
};

export function createConformanceContext(storage: () => StorageV1): ConformanceContext {
  // Ids are unique per run so the suite can share a database with earlier runs and other suites.
  const runTag = globalThis.crypto.randomUUID().slice(0, 8);
  let counter = 0;
  const id = (label: string) => `${label}-${runTag}-${++counter}`;

  const commit = (threadId: string, expectedVersion: number, events: ThreadEvent[], now: string) =>
    storage().commit({ threadId, expectedVersion, events, now });

  const commitOk = async (threadId: string, expectedVersion: number, events: ThreadEvent[], now: string) => {
    const result = await commit(threadId, expectedVersion, events, now);
    expect(result).toEqual({ ok: true, version: expectedVersion + 1 });
    return expectedVersion + 1;
  };

  const createThread = async (thread: ThreadRow, extra: ThreadEvent[] = [], now = thread.updatedAt) => {
    await commitOk(thread.threadId, 0, [{ type: "thread-updated", thread }, ...extra], now);
    return thread;
  };

  const load = async (threadId: string) => {
    const snapshot = await storage().loadThread({ threadId });
    if (!snapshot) throw new Error(`expected thread ${threadId} to exist`);
    return snapshot;
  };

  const recoverableOf = async (threadId: string, now: number) => {
    const all = await storage().listRecoverableRuns({ now: at(now), limit: 10_000 });
    return all.filter((entry) => entry.threadId === threadId);
  };

  return { storage, id, commit, commitOk, createThread, load, recoverableOf };
}
