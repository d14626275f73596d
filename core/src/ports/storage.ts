import type { StoredThreadEvents, ThreadEvent } from "../state/events.js";
import type { ActionRow, ActionState, ThreadRow } from "../state/rows.js";
import type { ThreadSnapshot } from "../state/snapshot.js";
import type { NotifierV1 } from "./notifier.js";

/**
 * What a storage adapter can do natively. Core branches on these flags, never on `name`.
 * Every flag defaults to `false` (see `defaultStorageCapabilities`).
 */
export type StorageCapabilities = {
  /** Several processes may share this storage (leases and recovery are meaningful). */
  sharedAcrossProcesses: boolean;
  /** The adapter can notify other processes of commits (it also exports a `NotifierV1`). */
  listenNotify: boolean;
};

export const defaultStorageCapabilities: StorageCapabilities = {
  sharedAcrossProcesses: false,
  listenNotify: false,
};

/**
 * One atomic change of a thread. Either every row implied by `events` is written, the
 * event batch is appended to the thread's log under `expectedVersion + 1`, and the thread
 * row's `version` becomes `expectedVersion + 1` with `updatedAt = now` — or nothing is
 * written and the result is a conflict.
 *
 * `expectedVersion: 0` creates the thread: `events` must then contain a `thread-updated`
 * event, and a thread with that id must not exist yet (else conflict).
 */
export type StorageCommit = {
  threadId: string;
  expectedVersion: number;
  events: ThreadEvent[];
  /** ISO timestamp from the runtime's clock (storage never reads a clock for rows). */
  now: string;
  /**
   * Takes the lease of a run this commit upserts, in the same atomic write, whatever lease the
   * run had. Meant for a run nobody drives: one the commit creates, or a parked run the commit
   * wakes. The runtime then drives it without a separate `acquireRunLease` round trip.
   */
  lease?: { runId: string; owner: string; expiresAt: string };
};

/** Rejects a `StorageCommit.lease` that does not name a run the commit upserts. */
export function commitLeaseProblem(input: StorageCommit): string | null {
  const lease = input.lease;
  if (lease === undefined) return null;
  if (typeof lease.owner !== "string" || lease.owner.length === 0)
    return "lease.owner must be a non-empty string.";
  if (Number.isNaN(Date.parse(lease.expiresAt))) {
    return `lease.expiresAt must be an ISO timestamp, got ${JSON.stringify(lease.expiresAt)}.`;
  }
  const upserted = input.events.some(
    (event) => event.type === "run-upserted" && event.run.runId === lease.runId,
  );
  return upserted ? null : `lease.runId "${lease.runId}" is not a run this commit upserts.`;
}

export type StorageCommitResult =
  | { ok: true; version: number }
  | { ok: false; reason: "conflict"; currentVersion: number | null };

export type ListThreadsInput = {
  scopeKey: string;
  agentId?: string;
  limit: number;
  /** Opaque cursor from a previous page. */
  cursor?: string | null;
};

export type ListActionsInput = {
  scopeKey: string;
  state?: ActionState;
  limit: number;
  cursor?: string | null;
};

export type RunLeaseInput = {
  threadId: string;
  runId: string;
  owner: string;
  now: string;
  expiresAt: string;
};

/**
 * Storage port, version 1. The unit of change is `commit`; rows are normalized per
 * thread, message, run, action and tool-data item, so a write costs O(change).
 * Lease methods are not versioned thread changes: heartbeats never bump `version`.
 */
export interface StorageV1 {
  readonly specificationVersion: "v1";
  /** Appears in error messages only. */
  readonly name: string;
  readonly capabilities?: Partial<StorageCapabilities>;
  /**
   * A notifier this storage itself publishes `thread-advanced` on after every successful
   * commit. A runtime without its own notifier uses this one, and does not publish commits
   * a second time on it.
   */
  readonly notifier?: NotifierV1 | undefined;

  commit(input: StorageCommit): Promise<StorageCommitResult>;

  /** One snapshot read of a thread (not a replay of its log), or null. */
  loadThread(input: { threadId: string }): Promise<ThreadSnapshot | null>;

  /** Threads of a scope, newest `updatedAt` first, then `threadId`. */
  listThreads(input: ListThreadsInput): Promise<{ threads: ThreadRow[]; nextCursor: string | null }>;

  /** Committed event batches with `version > afterVersion`, ascending. */
  readEvents(input: {
    threadId: string;
    afterVersion: number;
    limit?: number;
  }): Promise<StoredThreadEvents[]>;

  getAction(input: { threadId: string; actionId: string }): Promise<ActionRow | null>;

  /** Actions of a scope across threads (operator views), oldest first. */
  listActions(input: ListActionsInput): Promise<{ actions: ActionRow[]; nextCursor: string | null }>;

  /**
   * Takes or renews the lease of a run. Succeeds when the run has no lease, its lease
   * expired at `now`, or `owner` already holds it. Returns whether `owner` holds it now.
   * The run need not be committed yet (a lease taken first reserves it), and a commit that
   * upserts the run keeps its lease. A lease whose `expiresAt` is at or before `now` is expired.
   */
  acquireRunLease(input: RunLeaseInput): Promise<boolean>;

  /** Drops the lease if `owner` holds it. */
  releaseRunLease(input: { threadId: string; runId: string; owner: string }): Promise<void>;

  /**
   * Runs whose stored status is `running` or `queued` and whose lease is absent or expired
   * at `now`: candidates for recovery by any process.
   */
  listRecoverableRuns(input: {
    now: string;
    limit: number;
  }): Promise<Array<{ threadId: string; runId: string }>>;

  /**
   * Threads whose stored `wakeAt` is at or before `now`, earliest first: deadlines and
   * schedules that are due, for any process to act on (a dispatch engine's wake-up is the fast
   * path; this is what makes a lost wake-up late, never lost).
   */
  listDueThreads(input: { now: string; limit: number }): Promise<Array<{ threadId: string; wakeAt: string }>>;

  /** Releases connections the adapter opened itself (never a client the user passed in). */
  close?(): Promise<void>;
}
