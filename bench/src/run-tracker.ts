import type { DispatchV1, RuntimeEvent } from "@pai/core";

/**
 * Hears the runtime events of every instance in the process: when each thread's first model
 * call started, and when its run ended. Instances in one process share `performance.now()`, so
 * a time the API instance took and one a worker took compare directly.
 */
export class RunTracker {
  readonly firstModelCall = new Map<string, number>();
  /** When a worker's dispatch first handed over a job of the thread (job engines only). */
  readonly firstDelivery = new Map<string, number>();
  readonly #ended = new Set<string>();
  readonly #failed: string[] = [];
  readonly #waiters = new Map<string, () => void>();

  readonly observer = (event: RuntimeEvent) => {
    if (event.type === "model-start" && !this.firstModelCall.has(event.threadId))
      this.firstModelCall.set(event.threadId, performance.now());
    if (event.type !== "run-end" || this.#ended.has(event.threadId)) return;
    this.#ended.add(event.threadId);
    if (event.status !== "completed")
      this.#failed.push(`${event.threadId}: ${event.status} ${event.error ?? ""}`);
    this.#waiters.get(event.threadId)?.();
    this.#waiters.delete(event.threadId);
  };

  /** `dispatch`, noting when its workers are handed each thread's first job. */
  timed(dispatch: DispatchV1): DispatchV1 {
    return {
      specificationVersion: "v1",
      name: dispatch.name,
      send: (job, options) => dispatch.send(job, options),
      work: (handler, options) =>
        dispatch.work((job) => {
          if (!this.firstDelivery.has(job.threadId)) this.firstDelivery.set(job.threadId, performance.now());
          return handler(job);
        }, options),
      close: async () => dispatch.close?.(),
    };
  }

  /** Resolves once every thread's run ended; fails on a run that did not complete, or after `timeoutMs`. */
  async ended(threadIds: string[], timeoutMs: number): Promise<void> {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        const missing = threadIds.filter((threadId) => !this.#ended.has(threadId)).length;
        reject(new Error(`bench: ${missing} of ${threadIds.length} runs did not end within ${timeoutMs} ms`));
      }, timeoutMs);
    });
    const all = Promise.all(
      threadIds.map((threadId) =>
        this.#ended.has(threadId)
          ? undefined
          : new Promise<void>((resolve) => this.#waiters.set(threadId, resolve)),
      ),
    );
    try {
      await Promise.race([all, timeout]);
    } finally {
      clearTimeout(timer);
    }
    if (this.#failed.length > 0) throw new Error(`bench: runs did not complete: ${this.#failed.join("; ")}`);
  }
}
