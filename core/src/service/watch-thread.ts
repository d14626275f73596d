import type { NotifierMessage } from "../ports/notifier.js";
import type { Engine } from "../runtime/engine.js";
import type { ThreadSnapshot } from "../state/snapshot.js";
import type { WatchEvent } from "./service-types.js";

/**
 * Committed events after `afterVersion` from storage, then live: every notification makes it
 * re-read storage from the last delivered version, so nothing is lost or duplicated even when
 * notifications are dropped or arrive out of order.
 */
export async function* watchThread(
  engine: Engine,
  authorize: () => Promise<{ snapshot: ThreadSnapshot }>,
  afterVersion: number,
  signal: AbortSignal | undefined,
): AsyncGenerator<WatchEvent> {
  const { snapshot } = await authorize();
  const threadId = snapshot.thread.threadId;
  const queue: NotifierMessage[] = [];
  let wake: (() => void) | undefined;
  const unsubscribe = engine.notifier.subscribe(threadId, (message) => {
    queue.push(message);
    wake?.();
  });
  const onAbort = () => wake?.();
  signal?.addEventListener("abort", onAbort);
  let delivered = afterVersion;
  let needsRead = true;
  try {
    while (!signal?.aborted) {
      if (needsRead) {
        needsRead = false;
        const batches = await engine.store.storage.readEvents({ threadId, afterVersion: delivered });
        for (const batch of batches) {
          if (batch.version <= delivered) continue;
          delivered = batch.version;
          yield {
            type: "committed",
            threadId,
            version: batch.version,
            events: batch.events,
            createdAt: batch.createdAt,
          };
        }
      }
      while (queue.length > 0) {
        const message = queue.shift()!;
        if (message.type === "thread-advanced") {
          if (message.version > delivered) needsRead = true;
        } else {
          yield { type: "live", threadId, event: message.event };
        }
      }
      if (needsRead) continue;
      if (signal?.aborted) break;
      await new Promise<void>((resolve) => {
        wake = resolve;
        if (queue.length > 0 || signal?.aborted) resolve();
      });
      wake = undefined;
    }
  } finally {
    unsubscribe();
    signal?.removeEventListener("abort", onAbort);
  }
}
