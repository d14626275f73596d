import { PaiError } from "../errors/pai-error.js";
import { copyRows } from "../json/copy-rows.js";
import type { NotifierV1 } from "../ports/notifier.js";
import type { StorageCommit, StorageV1 } from "../ports/storage.js";
import type { ThreadEvent } from "../state/events.js";
import { applyStoredEvents, applyThreadEvents, atVersion, type ThreadSnapshot } from "../state/snapshot.js";
import type { Transition } from "../state/transitions.js";
import { KeyedMutex } from "./keyed-mutex.js";

export type TransactResult = { snapshot: ThreadSnapshot; version: number; events: ThreadEvent[] };

const MAX_CONFLICT_RETRIES = 8;

/**
 * The runtime's only path to storage writes: applies a pure transition to the freshest
 * snapshot and commits it against that snapshot's version. On a version conflict it
 * reloads and re-applies the transition, so a decision is always made on current state.
 * Commits of one thread are serialized inside this process; other processes are handled
 * by the optimistic version check.
 */
export class ThreadStore {
  readonly #mutex = new KeyedMutex();
  /**
   * Snapshots of threads this process is actively driving, so a step does not re-read the
   * whole thread. When the process stops working on a thread its snapshot moves to the bounded
   * `#recent` set; this map is bounded too, as a safety net.
   */
  readonly #cache = new Map<string, ThreadSnapshot>();
  static readonly MAX_CACHED = 256;

  constructor(
    readonly storage: StorageV1,
    readonly notifier: NotifierV1,
    readonly clock: () => Date,
  ) {}

  /** The last `now()`: a run asks for the time about ten times within one millisecond. */
  #lastNow = { time: Number.NaN, iso: "" };

  now(): string {
    const date = this.clock();
    const time = date.getTime();
    // Formatting a date costs ten times reading the clock; the same millisecond formats the same.
    if (time !== this.#lastNow.time) this.#lastNow = { time, iso: date.toISOString() };
    return this.#lastNow.iso;
  }

  /**
   * The thread as storage has it now. A recently finished thread is brought up to date from
   * its event log (one read of what changed since) instead of being read whole, so a turn on
   * a long thread costs the same as on a short one.
   */
  async load(threadId: string): Promise<ThreadSnapshot | null> {
    const recent = this.#recent.get(threadId);
    if (!recent) return this.storage.loadThread({ threadId });
    this.#recent.delete(threadId);
    let next = recent;
    for (const committed of await this.storage.readEvents({
      threadId,
      afterVersion: recent.thread.version,
    })) {
      if (committed.version !== next.thread.version + 1) return this.storage.loadThread({ threadId });
      next = applyStoredEvents(next, committed);
    }
    this.#keepRecent(threadId, next);
    return next;
  }

  /**
   * The thread for a change that commits against its version: a snapshot this process keeps is
   * used without a read. If it is stale the commit conflicts and `transact` re-reads, and a
   * rejection decided on it is re-checked on a fresh read before it is reported.
   */
  async loadForWrite(threadId: string): Promise<ThreadSnapshot | null> {
    return this.#cache.get(threadId) ?? this.#recent.get(threadId) ?? (await this.load(threadId));
  }

  /**
   * The thread for code outside the runtime (a service caller). A snapshot refreshed from the
   * event log is the object kept in `#recent`, so it is handed out as a copy: a caller that
   * mutates what it got must not change the runtime's next turn. A storage read is already
   * the caller's own.
   */
  async read(threadId: string): Promise<ThreadSnapshot | null> {
    const snapshot = await this.load(threadId);
    return snapshot !== null && this.#recent.get(threadId) === snapshot ? copyRows(snapshot) : snapshot;
  }

  /**
   * Threads this process ran last and no longer drives, idle or parked (waiting on an action),
   * kept to be refreshed by their event log. Bounded: a parked thread may wait for days, and
   * the oldest kept thread gives way to the next one, so ten thousand parked threads cost the
   * same as sixty-four.
   */
  readonly #recent = new Map<string, ThreadSnapshot>();
  static readonly MAX_RECENT = 64;

  #keepRecent(threadId: string, snapshot: ThreadSnapshot): void {
    this.#recent.delete(threadId);
    // A running thread or a queued run is someone's to drive: what it does next is not in the log yet.
    if (snapshot.thread.status === "running" || snapshot.runs.some((run) => run.status === "queued")) return;
    this.#recent.set(threadId, snapshot);
    if (this.#recent.size > ThreadStore.MAX_RECENT) {
      const oldest = this.#recent.keys().next().value;
      if (oldest !== undefined) this.#recent.delete(oldest);
    }
  }

  async require(threadId: string): Promise<ThreadSnapshot> {
    const snapshot = await this.load(threadId);
    if (!snapshot) throw new PaiError("NOT_FOUND", `Thread ${threadId} was not found.`);
    return snapshot;
  }

  /** Keeps a snapshot while this process drives the thread. */
  #remember(threadId: string, snapshot: ThreadSnapshot): void {
    if (!this.#active.has(threadId)) return;
    this.#cache.delete(threadId);
    this.#cache.set(threadId, snapshot);
    if (this.#cache.size > ThreadStore.MAX_CACHED) {
      const oldest = this.#cache.keys().next().value;
      if (oldest !== undefined) this.#cache.delete(oldest);
    }
  }

  readonly #active = new Map<string, number>();

  /** Marks a thread as driven by this process (enables caching) until the returned release is called. */
  hold(threadId: string): () => void {
    this.#active.set(threadId, (this.#active.get(threadId) ?? 0) + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const count = (this.#active.get(threadId) ?? 1) - 1;
      if (count <= 0) {
        this.#active.delete(threadId);
        const last = this.#cache.get(threadId);
        this.#cache.delete(threadId);
        if (last) this.#keepRecent(threadId, last);
      } else this.#active.set(threadId, count);
    };
  }

  /**
   * A copy of the snapshot this process holds of the thread (driven now, or run last), with no
   * storage read: the thread as of this process's last commit to it, which may be behind storage.
   */
  kept(threadId: string): ThreadSnapshot | undefined {
    const snapshot = this.#cache.get(threadId) ?? this.#recent.get(threadId);
    return snapshot ? copyRows(snapshot) : undefined;
  }

  /** Latest snapshot: cached while driven, otherwise one storage read. */
  async snapshot(threadId: string): Promise<ThreadSnapshot> {
    return this.#cache.get(threadId) ?? (await this.require(threadId));
  }

  /** Snapshots held of threads this process drives right now (a parked run is not driven). */
  get cachedThreads(): number {
    return this.#cache.size;
  }

  /** Snapshots kept of threads this process ran last, idle or parked (bounded by `MAX_RECENT`). */
  get recentThreads(): number {
    return this.#recent.size;
  }

  /**
   * Runs `decide` on fresh state and commits its events. A rejection throws a `PaiError`
   * and writes nothing. `decide` must be pure: it may run again after a conflict.
   */
  async transact(
    threadId: string,
    decide: (snapshot: ThreadSnapshot, now: string) => Transition,
    options: {
      create?: boolean;
      /** A snapshot the caller just read; used instead of a second read (a conflict still reloads). */
      fresh?: ThreadSnapshot;
      /** A run lease to take in the same commit, asked after `decide` (which may change its mind on retry). */
      lease?: () => StorageCommit["lease"];
    } = {},
  ): Promise<TransactResult> {
    return this.#mutex.run(threadId, async () => {
      for (let attempt = 0; attempt < MAX_CONFLICT_RETRIES; attempt++) {
        const cached =
          attempt === 0 && !options.create ? (this.#cache.get(threadId) ?? options.fresh) : undefined;
        const snapshot = options.create ? null : (cached ?? (await this.require(threadId)));
        const now = this.now();
        const base = snapshot ?? emptySnapshot(threadId, now);
        const transition = decide(base, now);
        if (!transition.ok) {
          if (cached) {
            // Decided on a snapshot this process kept: the answer must come from current state.
            this.#cache.delete(threadId);
            this.#recent.delete(threadId);
            continue;
          }
          throw new PaiError(
            transition.code,
            transition.message,
            transition.issues ? { issues: transition.issues } : {},
          );
        }
        if (transition.events.length === 0) {
          return { snapshot: base, version: base.thread.version, events: [] };
        }
        const expectedVersion = snapshot ? snapshot.thread.version : 0;
        const lease = options.lease?.();
        const result = await this.storage.commit({
          threadId,
          expectedVersion,
          events: transition.events,
          now,
          ...(lease ? { lease } : {}),
        });
        if (result.ok) {
          // `decide` got `base`, so a projection it returns is of these events from `base`.
          const next = atVersion(transition.after ?? applyThreadEvents(base, transition.events), {
            version: result.version,
            createdAt: now,
          });
          this.#remember(threadId, next);
          // A thread just created is about to get its first message: keep it for that write.
          if (options.create) this.#keepRecent(threadId, next);
          if (this.storage.notifier !== this.notifier) {
            void this.notifier
              .publish({
                type: "thread-advanced",
                threadId,
                version: result.version,
                committed: { events: transition.events, createdAt: now },
              })
              .catch(() => undefined);
          }
          return { snapshot: next, version: result.version, events: transition.events };
        }
        this.#cache.delete(threadId);
        this.#recent.delete(threadId);
        if (options.create) {
          throw new PaiError("CONFLICT", `Thread ${threadId} already exists. Use another id.`);
        }
      }
      throw new PaiError(
        "CONFLICT",
        `Thread ${threadId} kept changing while this change was applied; retry the request.`,
      );
    });
  }
}

/** The snapshot a transition sees before a thread exists. */
export function emptySnapshot(threadId: string, now: string): ThreadSnapshot {
  return {
    thread: {
      threadId,
      scopeKey: "",
      userKey: null,
      agentId: "",
      title: null,
      status: "idle",
      version: 0,
      activeRunId: null,
      metadata: null,
      createdAt: now,
      updatedAt: now,
    },
    messages: [],
    runs: [],
    actions: [],
    toolData: [],
  };
}
