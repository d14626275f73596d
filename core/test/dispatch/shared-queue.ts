import { type DispatchV1, inProcessDispatch } from "@pai/core";

/**
 * A queue shared by several runtimes in one test process that behaves like a job engine: not
 * `inProcess`, so a runtime on it is an API instance until it starts a worker.
 */
export function sharedQueue(): {
  dispatch: () => DispatchV1;
  sent: Array<{ kind: string }>;
  close(): Promise<void>;
} {
  const inner = inProcessDispatch();
  const sent: Array<{ kind: string }> = [];
  return {
    sent,
    dispatch: () => ({
      specificationVersion: "v1",
      name: "shared-test-queue",
      send: async (job, options) => {
        sent.push(job);
        await inner.send(job, options);
      },
      work: (handler, options) => inner.work(handler, options),
    }),
    close: async () => inner.close?.(),
  };
}
