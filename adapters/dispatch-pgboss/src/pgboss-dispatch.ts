import {
  type DispatchHandler,
  type DispatchJob,
  type DispatchSendOptions,
  type DispatchV1,
  type DispatchWorkerV1,
  type DispatchWorkOptions,
  dispatchJobProblem,
  PaiError,
} from "@pai/core";
import { type Job, PgBoss, type SendOptions } from "pg-boss";
import { pickDispatchJob } from "./dispatch-job.js";
import { type PgBossDispatchOptions, type ResolvedSettings, resolveSettings } from "./options.js";

/** A `DispatchV1` whose `close` is always there (it stops workers, and a PgBoss it started). */
export type PgBossDispatch = DispatchV1 & {
  /**
   * Stops the workers this dispatch started (waiting for their handlers), then the PgBoss it
   * created from `connectionString`; a PgBoss passed in keeps running. Idempotent.
   */
  close(): Promise<void>;
};

/**
 * Per-job settings, given to the queue when the dispatch creates it and again on every send, so a
 * job carries the settings of the process that sent it whoever created the queue:
 *
 * - retries: a handler that throws hands the job back. The PAI runtime throws for trouble that
 *   passes (storage unreachable, a run handed back by a draining worker), so a job comes again
 *   after about `retryDelay` seconds, backing off to `retryDelayMax`, for so many attempts that a
 *   run job is never failed (or dead-lettered) over a bad hour. No dead-letter queue: storage is
 *   the source of truth, and recovery adopts whatever a dropped job would have driven.
 * - heartbeat: workers refresh the jobs they hold every `heartbeatSeconds / 2`; the supervisor
 *   of any pg-boss instance on the schema fails (and so retries) a job whose heartbeat went
 *   stale, which is how a job held by a killed process comes back.
 * - expiration: `expireInSeconds` bounds a delivery whose process is alive but whose handler
 *   hangs (it keeps heartbeating); the job is then delivered again beside it.
 */
function jobSettings(settings: ResolvedSettings) {
  return {
    retryLimit: settings.retryLimit,
    retryDelay: settings.retryDelay,
    retryBackoff: true,
    retryDelayMax: settings.retryDelayMax,
    expireInSeconds: settings.expireInSeconds,
    heartbeatSeconds: settings.heartbeatSeconds,
  } satisfies SendOptions;
}

function notBeforeDate(options: DispatchSendOptions | undefined): Date | undefined {
  if (options?.notBefore === undefined) return undefined;
  const at = Date.parse(options.notBefore);
  if (Number.isNaN(at)) {
    throw new PaiError("INVALID_INPUT", "pgBossDispatch: `notBefore` must be an ISO instant.");
  }
  return new Date(at);
}

/**
 * A `DispatchV1` on pg-boss: jobs are rows in Postgres, delivered at least once to any worker on
 * the same queue, never before their `notBefore`. A job held by a worker that dies comes back
 * once its heartbeat is `heartbeatSeconds` old (plus one pass of a pg-boss supervisor).
 *
 * @example
 * ```ts
 * const dispatch = pgBossDispatch({ connectionString: process.env.DATABASE_URL! });
 * // In a worker process:
 * const worker = await dispatch.work(async (job) => handle(job), { concurrency: 8 });
 * // On shutdown:
 * await worker.stop();
 * await dispatch.close();
 * ```
 *
 * @throws PaiError `INVALID_DEFINITION` for options it cannot use (checked here, before any I/O).
 */
export function pgBossDispatch(options: PgBossDispatchOptions): PgBossDispatch {
  const settings = resolveSettings(options);
  const { queue } = settings;
  const report = (error: unknown) => {
    try {
      settings.onError(error);
    } catch {
      // A throwing onError must not fail the job it reports on (that would retry it forever).
    }
  };
  const owned = options.boss === undefined;
  const boss =
    options.boss ??
    new PgBoss({
      connectionString: options.connectionString,
      ...(options.schema === undefined ? {} : { schema: options.schema }),
      // Wakes workers the moment a job is sent (queues are created with `notify`); polling stays.
      useListenNotify: true,
    });
  // An EventEmitter throws an `error` nobody listens to; on our own instance that would crash.
  if (owned) boss.on("error", report);
  const perJob = jobSettings(settings);
  const workers = new Set<DispatchWorkerV1>();
  let opening: Promise<void> | undefined;
  let closing: Promise<void> | undefined;

  const open = async () => {
    if (owned) await boss.start();
    // Idempotent: a queue that exists (another process created it) is left as it is.
    await boss.createQueue(queue, { ...perJob, policy: "standard", notify: true });
  };
  const ready = () => {
    opening ??= open().catch((error: unknown) => {
      opening = undefined;
      throw error;
    });
    return opening;
  };
  const assertOpen = () => {
    if (closing) throw new PaiError("CONFLICT", "pgBossDispatch: this dispatch is closed.");
  };

  const deliver = async (job: Job<unknown>, handler: DispatchHandler) => {
    const problem = dispatchJobProblem(job.data);
    if (problem !== null) {
      // Resolving acknowledges it: a malformed payload would fail the same way on every delivery.
      report(
        new PaiError("INVALID_INPUT", `pgBossDispatch dropped job ${job.id} on queue ${queue}: ${problem}.`, {
          details: { queue, jobId: job.id },
        }),
      );
      return;
    }
    await handler(pickDispatchJob(job.data as DispatchJob));
  };

  return {
    specificationVersion: "v1",
    name: "pg-boss",

    async send(job: DispatchJob, sendOptions?: DispatchSendOptions) {
      assertOpen();
      const problem = dispatchJobProblem(job);
      if (problem !== null) throw new PaiError("INVALID_INPUT", `pgBossDispatch: ${problem}.`);
      const startAfter = notBeforeDate(sendOptions);
      await ready();
      await boss.send(queue, pickDispatchJob(job), {
        ...perJob,
        ...(startAfter === undefined ? {} : { startAfter }),
      });
    },

    async work(handler: DispatchHandler, workOptions: DispatchWorkOptions) {
      assertOpen();
      if (typeof handler !== "function") {
        throw new PaiError("INVALID_DEFINITION", "pgBossDispatch: `work` needs a handler function.");
      }
      const concurrency = workOptions?.concurrency;
      if (!Number.isInteger(concurrency) || concurrency < 1) {
        throw new PaiError(
          "INVALID_DEFINITION",
          "pgBossDispatch: `concurrency` must be a whole number of at least 1.",
        );
      }
      await ready();
      assertOpen();
      // `concurrency` loops that each hold one job: a slow job never holds up another slot, as it
      // would in a batch, and no more than `concurrency` handlers ever run.
      const id = await boss.work<unknown>(
        queue,
        {
          batchSize: 1,
          localConcurrency: concurrency,
          pollingIntervalSeconds: settings.pollingIntervalSeconds,
          // pg-boss polls a notify-enabled queue only every 30 s by default, and a worker that just
          // finished a job then waits that long for work that was sent while it was busy.
          notifyPollingIntervalSeconds: settings.pollingIntervalSeconds,
        },
        async (jobs) => {
          for (const job of jobs) await deliver(job, handler);
        },
      );
      let stopping: Promise<void> | undefined;
      const worker: DispatchWorkerV1 = {
        stop: () => {
          // `wait` resolves once every loop has stopped fetching and its handler has settled.
          stopping ??= boss.offWork(queue, { id, wait: true }).finally(() => workers.delete(worker));
          return stopping;
        },
      };
      workers.add(worker);
      // A close that began while pg-boss registered the worker did not see it.
      if (closing) {
        await worker.stop();
        assertOpen();
      }
      return worker;
    },

    close() {
      closing ??= (async () => {
        await opening?.catch(() => undefined);
        await Promise.allSettled([...workers].map((worker) => worker.stop()));
        if (owned) await boss.stop({ graceful: true });
      })();
      return closing;
    },
  };
}
