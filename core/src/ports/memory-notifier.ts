import type { NotifierMessage, NotifierV1 } from "./notifier.js";

/** In-process notifier: the default when storage brings none. */
export function createMemoryNotifier(): NotifierV1 {
  const listeners = new Map<string, Set<(message: NotifierMessage) => void>>();
  return {
    specificationVersion: "v1",
    async publish(message) {
      const set = listeners.get(message.threadId);
      if (!set) return;
      for (const listener of [...set]) {
        try {
          listener(message);
        } catch {
          // A faulty listener must not stop delivery to the others.
        }
      }
    },
    subscribe(threadId, listener) {
      let set = listeners.get(threadId);
      if (!set) {
        set = new Set();
        listeners.set(threadId, set);
      }
      set.add(listener);
      return () => {
        set.delete(listener);
        if (set.size === 0) listeners.delete(threadId);
      };
    },
  };
}
