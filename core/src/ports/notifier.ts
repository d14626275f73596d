import type { LiveEvent, ThreadEvent } from "../state/events.js";

export type NotifierMessage =
  | {
      type: "thread-advanced";
      threadId: string;
      version: number;
      /**
       * The batch that made this version, when the publisher has it and the message stays in the
       * process (a watcher then needs no storage read). A notifier that crosses processes drops it:
       * watchers there read the batch from storage, as they do whenever it is missing.
       */
      committed?: { events: ThreadEvent[]; createdAt: string };
    }
  | { type: "live"; threadId: string; event: LiveEvent };

/**
 * Fans out "thread X advanced to version N" and transient live events, within one process
 * (`createMemoryNotifier`) or across processes (Postgres LISTEN/NOTIFY in storage-kysely).
 * Delivery is best effort: watchers take committed events by version, from the message when it
 * carries the next batch and from storage otherwise.
 */
export interface NotifierV1 {
  readonly specificationVersion: "v1";
  publish(message: NotifierMessage): Promise<void>;
  /** Returns an unsubscribe function. */
  subscribe(threadId: string, listener: (message: NotifierMessage) => void): () => void;
  /**
   * Resolves once messages published from now on reach this process's subscribers (a
   * cross-process notifier may still be connecting after its first `subscribe`). A watcher awaits
   * it before its first read, so a commit between that read and the connection is never missed.
   */
  ready?(): Promise<void>;
  close?(): Promise<void>;
}
