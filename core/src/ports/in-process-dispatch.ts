import type {
  DispatchHandler,
  DispatchJob,
  DispatchSendOptions,
  DispatchV1,
  DispatchWorkerV1,
} from "./dispatch.js";

const RETRY_MS = 250;
// setTimeout takes at most a signed 32-bit delay; later jobs wait in steps.
const MAX_TIMER_MS = 2 ** 31 - 1;

/**
 * The default dispatch: jobs stay in this process, and are lost with it. Durable work is never
 * lost that way, because storage is the source of truth: recovery adopts runs whose lease
 * expired and wakes threads whose deadline or schedule passed.
 */
export function inProcessDispatch(): DispatchV1 {
  const queue: DispatchJob[] = [];
  const consumers = new Set<Consumer>();
  const timers = new Set<ReturnType<typeof setTimeout>>();
  let closed = false;

  const pump = () => {
    for (const consumer of consumers) consumer.pump();
  };
  const enqueue = (job: DispatchJob) => {
    if (closed) return;
    queue.push(job);
    pump();
  };
  const later = (job: DispatchJob, at: number) => {
    const wait = at - Date.now();
    if (wait <= 0) return enqueue(job);
    const timer = setTimeout(
      () => {
        timers.delete(timer);
        later(job, at);
      },
      Math.min(wait, MAX_TIMER_MS),
    );
    timer.unref?.();
    timers.add(timer);
  };

  class Consumer implements DispatchWorkerV1 {
    readonly #running = new Set<Promise<void>>();
    #stopped = false;
    constructor(
      readonly handler: DispatchHandler,
      readonly concurrency: number,
    ) {}

    pump(): void {
      while (!this.#stopped && this.#running.size < this.concurrency && queue.length > 0) {
        const job = queue.shift() as DispatchJob;
        const handled: Promise<void> = this.handler(job).then(
          () => undefined,
          () => later(job, Date.now() + RETRY_MS),
        );
        this.#running.add(handled);
        void handled.finally(() => {
          this.#running.delete(handled);
          pump();
        });
      }
    }

    async stop(): Promise<void> {
      this.#stopped = true;
      consumers.delete(this);
      await Promise.allSettled([...this.#running]);
      pump();
    }
  }

  return {
    specificationVersion: "v1",
    name: "in-process",
    inProcess: true,
    async send(job: DispatchJob, options: DispatchSendOptions = {}) {
      const at = options.notBefore === undefined ? Date.now() : Date.parse(options.notBefore);
      later(structuredClone(job), Number.isNaN(at) ? Date.now() : at);
    },
    async work(handler, options) {
      const consumer = new Consumer(handler, Math.max(1, Math.floor(options.concurrency)));
      consumers.add(consumer);
      queueMicrotask(() => consumer.pump());
      return consumer;
    },
    async close() {
      closed = true;
      for (const timer of timers) clearTimeout(timer);
      timers.clear();
      queue.length = 0;
    },
  };
}
