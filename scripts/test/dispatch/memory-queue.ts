import type { DispatchHandler, DispatchJob, DispatchV1 } from "@pai/core";

/**
 * A job engine in memory for tests in one process: a FIFO queue delivered to whichever worker
 * has a free slot; a handler that throws puts its job back at the end. Not `inProcess`, so a
 * runtime on it is an API instance until it starts a worker.
 */
export function memoryQueue() {
  const queue: DispatchJob[] = [];
  const sent: DispatchJob[] = [];
  const workers: Array<() => void> = [];
  const pump = () => {
    for (const wake of workers) wake();
  };
  const dispatch: DispatchV1 = {
    specificationVersion: "v1",
    name: "memory-queue",
    send: async (job) => {
      sent.push(job);
      queue.push(job);
      pump();
    },
    work: async (handler: DispatchHandler, { concurrency }) => {
      let active = 0;
      let stopped = false;
      const wake = () => {
        while (!stopped && active < concurrency && queue.length > 0) {
          const job = queue.shift()!;
          active++;
          void handler(job)
            .catch(() => {
              queue.push(job);
            })
            .finally(() => {
              active--;
              setTimeout(wake, 5);
            });
        }
      };
      workers.push(wake);
      wake();
      return {
        stop: async () => {
          stopped = true;
        },
      };
    },
  };
  return { dispatch, sent };
}
