import { copyRows } from "../json/copy-rows.js";
import type { NotifierMessage } from "../ports/notifier.js";
import type { RuntimeCommands } from "../runtime/runtime-commands.js";
import { yieldToEventLoop } from "../runtime/yield-to-event-loop.js";
import type { ThreadSnapshot } from "../state/snapshot.js";
import type { WatchEvent } from "./service-types.js";

/**
 * Committed batches read per storage query while a watcher catches up. A watcher holds at most
 * one page, so a long log (or many watchers replaying it at once) never has to fit in memory.
 */
export const WATCH_REPLAY_PAGE_SIZE = 64;

/**
 * Committed events after `afterVersion` from storage, then live: a notification that carries the
 * next batch (an in-process notifier) is delivered as is; any other makes it re-read storage from
 * the last delivered version before anything queued behind it, so nothing is lost or duplicated
 * even when notifications are dropped or arrive out of order, and a live event never overtakes
 * a commit announced before it (a batch of notifications holds both). Each read goes page by page
 * (`WATCH_REPLAY_PAGE_SIZE` batches, each page after the last delivered version) until a short
 * page shows the watcher has caught up; live events queued meanwhile follow, as before. A
 * watcher that hears nothing for `watchCatchUpMs` reads anyway, so a lost notification only
 * delays it.
 */
export async function* watchThread(
  engine: RuntimeCommands,
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
    // Subscribed first, connected before the first read: no commit falls between the two.
    await engine.notifier.ready?.();
    while (!signal?.aborted) {
      if (needsRead) {
        needsRead = false;
        for (let page = 0; ; page++) {
          if (page > 0) await yieldToEventLoop();
          if (signal?.aborted) return;
          const batches = await engine.store.storage.readEvents({
            threadId,
            afterVersion: delivered,
            limit: WATCH_REPLAY_PAGE_SIZE,
          });
          for (const batch of batches) {
            if (signal?.aborted) return;
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
          // A storage that ignored `limit` returned everything: the next read comes back empty.
          if (batches.length < WATCH_REPLAY_PAGE_SIZE) break;
        }
      }
      while (queue.length > 0) {
        const message = queue.shift()!;
        if (message.type === "thread-advanced") {
          if (message.version <= delivered) continue;
          // The next batch, carried by an in-process notification: no storage read. A copy, since
          // the events are the runtime's own rows and the watcher's caller may change what it gets.
          if (!needsRead && message.committed && message.version === delivered + 1) {
            delivered = message.version;
            yield {
              type: "committed",
              threadId,
              version: message.version,
              events: copyRows(message.committed.events),
              createdAt: message.committed.createdAt,
            };
            if (signal?.aborted) return;
          } else {
            // Read before going on: the messages queued behind this one were published after
            // its commit, and a live delta must not reach the watcher ahead of that commit.
            needsRead = true;
            break;
          }
        } else {
          yield { type: "live", threadId, event: message.event };
        }
      }
      if (needsRead) continue;
      if (signal?.aborted) break;
      let catchUp: ReturnType<typeof setTimeout> | undefined;
      await new Promise<void>((resolve) => {
        wake = resolve;
        if (queue.length > 0 || signal?.aborted) return resolve();
        // Notifications are best effort: a quiet watcher checks storage now and then.
        catchUp = setTimeout(() => {
          needsRead = true;
          resolve();
        }, engine.watchCatchUpMs);
        catchUp.unref?.();
      });
      clearTimeout(catchUp);
      wake = undefined;
    }
  } finally {
    unsubscribe();
    signal?.removeEventListener("abort", onAbort);
  }
}
