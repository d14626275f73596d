/**
 * The work this process has in flight, and nothing else: one driver per run, the tool calls
 * each run is executing, an abort controller per run, and the promises per thread that
 * `waitForIdle` waits on. All state of a run lives in storage; dropping this registry loses
 * only what a restart loses too.
 */
const NONE: ReadonlySet<string> = new Set();

export class RunRegistry {
  readonly #drivers = new Map<string, { again: boolean; promise: Promise<void> }>();
  readonly #inflight = new Map<string, Set<string>>();
  readonly #work = new Map<string, Set<Promise<unknown>>>();
  readonly #aborts = new Map<string, AbortController>();

  /** The driver of a run in this process, if one is active. */
  driver(runId: string) {
    return this.#drivers.get(runId);
  }

  hasDriver(runId: string): boolean {
    return this.#drivers.has(runId);
  }

  setDriver(runId: string, driver: { again: boolean; promise: Promise<void> }): void {
    this.#drivers.set(runId, driver);
  }

  dropDriver(runId: string): void {
    this.#drivers.delete(runId);
  }

  /** Tool calls of a run this process is executing (a driver never mistakes them for crash leftovers). */
  inflight(runId: string): Set<string> {
    let set = this.#inflight.get(runId);
    if (!set) {
      set = new Set();
      this.#inflight.set(runId, set);
    }
    return set;
  }

  /** The calls of a run in flight here, without creating bookkeeping for a run that has none. */
  inflightOf(runId: string): ReadonlySet<string> {
    return this.#inflight.get(runId) ?? NONE;
  }

  /** Tracks a promise as work on a thread until it settles. */
  track<T>(threadId: string, promise: Promise<T>): Promise<T> {
    let set = this.#work.get(threadId);
    if (!set) {
      set = new Set();
      this.#work.set(threadId, set);
    }
    set.add(promise);
    const done = () => {
      set.delete(promise);
      if (set.size === 0 && this.#work.get(threadId) === set) this.#work.delete(threadId);
    };
    promise.then(done, done);
    return promise;
  }

  async waitForIdle(threadId: string): Promise<void> {
    for (;;) {
      const set = this.#work.get(threadId);
      if (!set || set.size === 0) return;
      await Promise.allSettled([...set]);
    }
  }

  async waitForAll(): Promise<void> {
    while (this.#work.size > 0) {
      await Promise.allSettled([...this.#work.values()].flatMap((set) => [...set]));
    }
  }

  holdsThread(threadId: string): boolean {
    return this.#work.has(threadId);
  }

  abortSignal(runId: string): AbortSignal {
    let controller = this.#aborts.get(runId);
    if (!controller) {
      controller = new AbortController();
      this.#aborts.set(runId, controller);
    }
    return controller.signal;
  }

  /** Aborts the run's in-flight calls (cancelled, lease lost) and forgets its controller. */
  abort(runId: string, reason: unknown): void {
    this.#aborts.get(runId)?.abort(reason);
    this.#aborts.delete(runId);
  }

  abortAll(reason: unknown): void {
    for (const controller of this.#aborts.values()) controller.abort(reason);
  }

  /**
   * Drops per-run bookkeeping once a run parks or ends, so a waiting run costs this process
   * nothing (a resumed run gets fresh bookkeeping). Kept while calls are still in flight.
   */
  forget(runId: string): void {
    const inflight = this.#inflight.get(runId);
    if (inflight && inflight.size > 0) return;
    this.#inflight.delete(runId);
    this.#aborts.delete(runId);
  }

  /** Drops the abort controller only (a run that ended elsewhere). */
  dropAbort(runId: string): void {
    this.#aborts.delete(runId);
  }
}
