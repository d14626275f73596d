// bullMqDispatch: the dispatch port on a BullMQ queue in Redis, shared by every process of a deployment.
import type {
  DispatchHandler,
  DispatchJob,
  DispatchSendOptions,
  DispatchV1,
  DispatchWorkerV1,
  DispatchWorkOptions,
} from "@pai/core";
import { dispatchJobProblem, getErrorMessage, PaiError } from "@pai/core";
import { type JobsOptions, Queue, Worker } from "bullmq";
import { assertWorkerConnection, type BullMqDispatchOptions, resolveOptions } from "./options.js";
import { BACKOFF_TYPE, retryDelayMs, UNLIMITED } from "./retry-policy.js";

/** A `DispatchV1` on BullMQ; `close` also stops the workers it started. */
export type BullMqDispatch = DispatchV1 & { close(): Promise<void> };

const closedError = () => new PaiError("INTERNAL", "This bullMqDispatch is closed; create a new one.");

/** Milliseconds from now until `notBefore` (0 when absent or past). */
function delayUntil(notBefore: string | undefined): number {
  if (notBefore === undefined) return 0;
  const at = typeof notBefore === "string" ? Date.parse(notBefore) : Number.NaN;
  if (Number.isNaN(at)) {
    throw new PaiError("INVALID_INPUT", "A dispatch job's `notBefore` must be an ISO instant.");
  }
  return Math.max(0, at - Date.now());
}

/**
 * What the processor throws for a handler that threw. BullMQ reads meaning into some error
 * names (an `UnrecoverableError` fails the job for good, a `DelayedError` means the job was
 * moved already) and trips over thrown non-errors; a handler's failure must only ever mean
 * "deliver again later".
 */
function handlerFailure(error: unknown): Error {
  const failure = new Error(getErrorMessage(error), { cause: error });
  failure.name = "DispatchHandlerError";
  if (error instanceof Error && error.stack) failure.stack = error.stack;
  return failure;
}

/**
 * Dispatch on a BullMQ queue: `send` adds a Redis job (delayed until `notBefore`), `work`
 * starts a BullMQ worker. Delivery is at least once: a job whose handler throws comes back
 * after a capped exponential backoff, and a job whose worker died (crash, SIGKILL, lost
 * network) comes back once its lock expires and a live worker's stalled-job check finds it.
 */
export function bullMqDispatch(options: BullMqDispatchOptions): BullMqDispatch {
  const settings = resolveOptions(options);
  const { connection, queue: queueName, prefix, onError } = settings;
  const jobOptions: JobsOptions = {
    attempts: UNLIMITED,
    backoff: { type: BACKOFF_TYPE },
    removeOnComplete: settings.removeOnComplete,
    removeOnFail: settings.removeOnFail,
    // Every failed attempt appends a stack trace to the job; with unlimited retries only a
    // bound keeps the job small.
    stackTraceLimit: 1,
  };
  const prefixOption = prefix === undefined ? {} : { prefix };

  let queue: Queue | undefined;
  const workers = new Set<DispatchWorkerV1>();
  let closing: Promise<void> | undefined;

  // Opened on the first send, so a process that only works (or only builds the object) holds
  // no producer connection.
  const producer = (): Queue => {
    if (queue) return queue;
    queue = new Queue(queueName, { connection, ...prefixOption });
    // An EventEmitter without an `error` listener throws; connection errors are retried by
    // ioredis and only reported.
    queue.on("error", onError);
    return queue;
  };

  const processorFor = (handler: DispatchHandler) => async (job: { id?: string; data: unknown }) => {
    const problem = dispatchJobProblem(job.data);
    if (problem !== null) {
      // Acknowledged (the processor resolves), so a malformed job is dropped, not retried forever.
      onError(
        new PaiError("INVALID_INPUT", `Dropped job ${job.id} of BullMQ queue "${queueName}": ${problem}.`, {
          details: { queue: queueName, jobId: job.id },
        }),
      );
      return;
    }
    try {
      await handler(job.data as DispatchJob);
    } catch (error) {
      throw handlerFailure(error);
    }
  };

  return {
    specificationVersion: "v1",
    name: "bullmq",

    async send(job: DispatchJob, sendOptions: DispatchSendOptions = {}) {
      if (closing) throw closedError();
      const problem = dispatchJobProblem(job);
      if (problem !== null) throw new PaiError("INVALID_INPUT", `Cannot dispatch this job: ${problem}.`);
      const delay = delayUntil(sendOptions.notBefore);
      try {
        await producer().add(job.kind, job, { ...jobOptions, delay });
      } catch (error) {
        throw new PaiError("INTERNAL", `Could not add a ${job.kind} job to BullMQ queue "${queueName}".`, {
          cause: error,
        });
      }
    },

    async work(handler: DispatchHandler, workOptions: DispatchWorkOptions) {
      if (closing) throw closedError();
      if (typeof handler !== "function") {
        throw new PaiError("INVALID_DEFINITION", "bullMqDispatch.work needs a handler function.");
      }
      const concurrency = workOptions?.concurrency;
      if (!Number.isSafeInteger(concurrency) || concurrency < 1) {
        throw new PaiError(
          "INVALID_DEFINITION",
          "bullMqDispatch.work needs `concurrency`: an integer of at least 1.",
        );
      }
      assertWorkerConnection(connection);
      const worker = new Worker(queueName, processorFor(handler), {
        connection,
        ...prefixOption,
        concurrency,
        // A live worker renews its locks every half lockDuration; a dead one's expire, and the
        // next stalled check (run by any live worker) hands its jobs to the others.
        lockDuration: settings.stalledIntervalMs,
        stalledInterval: settings.stalledIntervalMs,
        maxStalledCount: UNLIMITED,
        settings: { backoffStrategy: (attemptsMade: number) => retryDelayMs(attemptsMade, settings.retry) },
      });
      worker.on("error", onError);

      let stopping: Promise<void> | undefined;
      const handle: DispatchWorkerV1 = {
        // Worker.close() stops fetching, then waits for the jobs it holds to settle (and marks
        // them completed or failed) before it closes the connections it opened.
        stop: () => {
          stopping ??= worker.close().finally(() => workers.delete(handle));
          return stopping;
        },
      };
      workers.add(handle);
      return handle;
    },

    close() {
      closing ??= (async () => {
        await Promise.all([...workers].map((worker) => worker.stop()));
        await queue?.close();
      })();
      return closing;
    },
  };
}
