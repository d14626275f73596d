import type { Pai } from "@pai/core";
import { internalsOf } from "@pai/core/testing";

/**
 * The parked-threads table: heap growth while `count` threads each wait on a pending action, the
 * runtime's own share (what is freed when it is dropped), and the snapshots it still holds: none of
 * driven threads, and at most 64 of the threads it ran last (kept to answer them quickly).
 */
const identity = { scopeKey: "bench", userKey: "bench-user" };

/** Heap after full collections, once pending callbacks (notifications, timers) have run. */
async function settledHeap(): Promise<number> {
  const gc = (globalThis as { gc?: () => void }).gc;
  gc?.();
  await new Promise((resolve) => setTimeout(resolve, 50));
  gc?.();
  return process.memoryUsage().heapUsed;
}

/** `create` builds the runtime here, so nothing outside keeps it alive when it is dropped. */
export async function benchParked(create: () => Pai, engine: string, count: number) {
  let pai: Pai | null = create();
  const before = await settledHeap();
  const concurrency = 50;
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < count) {
        next++;
        const thread = await pai!.service.threads.create({ identity });
        await pai!.service.threads.send({
          identity,
          threadId: thread.threadId,
          message: { text: "ship?" },
        });
        await pai!.waitForIdle(thread.threadId);
      }
    }),
  );
  const after = await settledHeap();
  const held = internalsOf(pai).store.cachedThreads;
  const recent = internalsOf(pai).store.recentThreads;
  await pai.close();
  pai = null;
  // What is left once the runtime is gone is the storage's (for memory storage: every thread).
  const withoutRuntime = await settledHeap();
  return {
    engine,
    threads: count,
    heapDeltaMiB: (after - before) / 2 ** 20,
    runtimeHeldMiB: (after - withoutRuntime) / 2 ** 20,
    cachedSnapshots: held,
    recentSnapshots: recent,
  };
}
