import type { StorageV1 } from "@pai/core";

export type StorageCounters = {
  calls: number;
  commits: number;
  bytesWritten: number;
  byMethod: Record<string, number>;
};

/**
 * Wraps a storage adapter to count calls (storage round trips, as the runtime issues
 * them) and the bytes of committed events (the size of what a commit writes).
 */
export function countingStorage(
  inner: StorageV1,
  options: { bytes?: boolean } = {},
): {
  storage: StorageV1;
  counters: StorageCounters;
  reset(): void;
} {
  const counters: StorageCounters = { calls: 0, commits: 0, bytesWritten: 0, byMethod: {} };
  const count = (method: string) => {
    counters.calls++;
    counters.byMethod[method] = (counters.byMethod[method] ?? 0) + 1;
  };
  const counted =
    <TInput, TResult>(method: string, call: (input: TInput) => TResult) =>
    (input: TInput): TResult => {
      count(method);
      return call(input);
    };
  const storage: StorageV1 = {
    specificationVersion: "v1",
    name: `counting(${inner.name})`,
    ...(inner.capabilities ? { capabilities: inner.capabilities } : {}),
    async commit(input) {
      count("commit");
      counters.commits++;
      // Serializing the events costs time of its own: a timed caller turns it off.
      if (options.bytes !== false) counters.bytesWritten += Buffer.byteLength(JSON.stringify(input.events));
      return inner.commit(input);
    },
    loadThread: counted("loadThread", (input) => inner.loadThread(input)),
    listThreads: counted("listThreads", (input) => inner.listThreads(input)),
    readEvents: counted("readEvents", (input) => inner.readEvents(input)),
    getAction: counted("getAction", (input) => inner.getAction(input)),
    listActions: counted("listActions", (input) => inner.listActions(input)),
    acquireRunLease: counted("acquireRunLease", (input) => inner.acquireRunLease(input)),
    releaseRunLease: counted("releaseRunLease", (input) => inner.releaseRunLease(input)),
    listRecoverableRuns: counted("listRecoverableRuns", (input) => inner.listRecoverableRuns(input)),
    listDueThreads: counted("listDueThreads", (input) => inner.listDueThreads(input)),
    ...(inner.close ? { close: () => inner.close!() } : {}),
  };
  return {
    storage,
    counters,
    reset() {
      counters.calls = 0;
      counters.commits = 0;
      counters.bytesWritten = 0;
      counters.byMethod = {};
    },
  };
}
