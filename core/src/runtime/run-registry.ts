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
  /** Calls an accepted answer will finish, counted per answer: see `claimAnswer`. */
  readonly #answering = new Map<string, Map<string, number>>();
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

  /**
   * The calls of a run in flight here (executing, or being finished by an answer), without
   * creating bookkeeping for a run that has none.
   */
  inflightOf(runId: string): ReadonlySet<string> {
    const executing = this.#inflight.get(runId) ?? NONE;
    const answering = this.#answering.get(runId);
    if (!answering) return executing;
    return new Set([...executing, ...answering.keys()]);
  }

  /**
   * Claims a call that an answer (submit, cancel, fail) will finish in this process, from before
   * its commit until its outcome is committed. Counted, and apart from the executing calls: the
   * call may still be finishing its own execution (a tool that has just suspended), and a second
   * request for the same action may be under way, so neither that execution's end nor the other
   * request may take this claim away. Each claim is released once (`releaseAnswer`).
   */
  claimAnswer(runId: string, toolCallId: string): void {
    let answering = this.#answering.get(runId);
    if (!answering) {
      answering = new Map();
      this.#answering.set(runId, answering);
    }
    answering.set(toolCallId, (answering.get(toolCallId) ?? 0) + 1);
  }

  releaseAnswer(runId: string, toolCallId: string): void {
    const answering = this.#answering.get(runId);
    const count = answering?.get(toolCallId);
    if (!answering || count === undefined) return;
    if (count > 1) answering.set(toolCallId, count - 1);
    else {
      answering.delete(toolCallId);
      if (answering.size === 0) this.#answering.delete(runId);
    }
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
    if ((inflight && inflight.size > 0) || this.#answering.has(runId)) return;
    this.#inflight.delete(runId);
    this.#aborts.delete(runId);
  }

  /** Drops the abort controller only (a run that ended elsewhere). */
  dropAbort(runId: string): void {
    this.#aborts.delete(runId);
  }
}
