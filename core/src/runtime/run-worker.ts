import { PaiError } from "../errors/pai-error.js";
import { type DispatchJob, type DispatchWorkerV1, dispatchJobProblem } from "../ports/dispatch.js";

/** Options of `pai.startWorker`. */
export type WorkerOptions = {
  /** Most jobs (runs driven, threads woken) this process works on at once. Default 10. */
  concurrency?: number;
  /**
   * Most of those slots one scope (tenant) may hold. A job of a scope at its limit goes back to
   * the engine for a moment, so one busy tenant cannot starve the others. Default: no limit.
   */
  maxPerScope?: number;
  /**
   * How long `stop()` waits for runs in flight to park or end, in ms. Runs still going then are
   * handed back: their leases are released (another worker adopts them at once) and their jobs
   * are delivered again. Default 30 s.
   */
  drainMs?: number;
  /** How often this worker looks for runs whose driver died and threads that are due, in ms. Default 5 s. */
  recoveryIntervalMs?: number;
};

/** A worker started by `pai.startWorker`. */
export type PaiWorker = {
  /** Jobs being worked on now. */
  readonly active: number;
  /** Drains: takes no new jobs, waits up to `drainMs`, then hands unfinished runs back. Idempotent. */
  stop(): Promise<void>;
};

/** What a worker needs of the runtime (the engine provides it). */
export type WorkerHost = {
  readonly dispatch: {
    port: { work: (...args: any[]) => Promise<DispatchWorkerV1> };
    send(job: DispatchJob, notBefore?: string): void;
  };
  handleJob(job: DispatchJob): Promise<void>;
  recover(): Promise<number>;
  handBack(): Promise<void>;
  reportError(report: { error: unknown; phase: "recovery" }): void;
};

const SCOPE_RETRY_MS = 250;

/** Checks worker options (a bad value refuses to start, it never widens anything). */
export function workerSettings(options: WorkerOptions) {
  const whole = (value: number | undefined, name: string, fallback: number, min: number, max: number) => {
    if (value === undefined) return fallback;
    if (!Number.isInteger(value) || value < min || value > max) {
      throw new PaiError(
        "INVALID_DEFINITION",
        `${name} must be an integer from ${min} to ${max}, got ${value}.`,
      );
    }
    return value;
  };
  const concurrency = whole(options.concurrency, "concurrency", 10, 1, 1_000);
  return {
    concurrency,
    maxPerScope: whole(options.maxPerScope, "maxPerScope", concurrency, 1, concurrency),
    drainMs: whole(options.drainMs, "drainMs", 30_000, 0, 3_600_000),
    recoveryIntervalMs: whole(options.recoveryIntervalMs, "recoveryIntervalMs", 5_000, 50, 3_600_000),
  };
}

/**
 * Drives the jobs a dispatch engine delivers. The engine may deliver a job twice or late; the
 * runtime's leases and version fences make each count once: a run another worker holds is left
 * to it, a run that parked or ended is acknowledged, a wake-up with nothing due does nothing.
 */
export async function startWorker(host: WorkerHost, options: WorkerOptions = {}): Promise<PaiWorker> {
  const settings = workerSettings(options);
  const perScope = new Map<string, number>();
  let active = 0;
  const handle = async (job: DispatchJob) => {
    const problem = dispatchJobProblem(job);
    if (problem) {
      host.reportError({
        error: new PaiError("INVALID_INPUT", `Dropped a dispatch job: ${problem}.`),
        phase: "recovery",
      });
      return;
    }
    const held = perScope.get(job.scopeKey) ?? 0;
    if (held >= settings.maxPerScope) {
      host.dispatch.send(job, new Date(Date.now() + SCOPE_RETRY_MS).toISOString());
      return;
    }
    perScope.set(job.scopeKey, held + 1);
    active++;
    try {
      await host.handleJob(job);
    } finally {
      active--;
      const left = (perScope.get(job.scopeKey) ?? 1) - 1;
      if (left === 0) perScope.delete(job.scopeKey);
      else perScope.set(job.scopeKey, left);
    }
  };
  const consumer = await host.dispatch.port.work(handle, { concurrency: settings.concurrency });
  const sweep = () => void host.recover().catch((error) => host.reportError({ error, phase: "recovery" }));
  const timer = setInterval(sweep, settings.recoveryIntervalMs);
  timer.unref?.();
  sweep();
  let stopping: Promise<void> | undefined;
  return {
    get active() {
      return active;
    },
    stop() {
      stopping ??= (async () => {
        clearInterval(timer);
        const drained = consumer.stop().then(() => true);
        const timeout = new Promise<false>((resolve) => {
          const wait = setTimeout(() => resolve(false), settings.drainMs);
          wait.unref?.();
        });
        if (!(await Promise.race([drained, timeout]))) {
          await host.handBack();
          await drained.catch(() => undefined);
        }
      })();
      return stopping;
    },
  };
}
