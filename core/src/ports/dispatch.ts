/**
 * Dispatch port, version 1: how a runtime hands work to whichever process drives it, now or at
 * an instant. The runtime's leases and version fences stay the source of truth; an engine only
 * has to deliver every job at least once, never before its `notBefore`, and may deliver a job
 * twice or to two workers at once: the runtime makes each delivery count at most once.
 */

/** Work a runtime dispatches. Plain JSON, so any engine can store it. */
export type DispatchJob =
  /** Drive a run (start a queued one, continue a running one, adopt one whose driver died). */
  | { kind: "run"; threadId: string; runId: string; scopeKey: string }
  /** Look at a thread at or after `at`: deadlines that passed, schedules that are due. */
  | { kind: "wake"; threadId: string; scopeKey: string; at: string };

export type DispatchSendOptions = {
  /** ISO instant before which the job must not be delivered. Absent: as soon as possible. */
  notBefore?: string;
};

export type DispatchWorkOptions = {
  /** Most jobs this worker handles at once (at least 1). */
  concurrency: number;
};

/**
 * Handles one delivery. Resolving acknowledges the job (it is not delivered again); throwing
 * hands it back, and the engine delivers it again later (after a short backoff is fine).
 */
export type DispatchHandler = (job: DispatchJob) => Promise<void>;

/** A running consumer of jobs. */
export interface DispatchWorkerV1 {
  /**
   * Stops taking new jobs, then waits for the handlers in flight to settle. Jobs whose
   * handler has not settled when `stop` resolves must be delivered again later (to any
   * worker): stopping never loses a job.
   */
  stop(): Promise<void>;
}

export interface DispatchV1 {
  readonly specificationVersion: "v1";
  /** Appears in error messages and benchmarks only. */
  readonly name: string;
  /**
   * True when jobs never leave this process (the default dispatch): a commit may then take
   * the run's lease itself and drive the run at once, without a round trip through an engine.
   */
  readonly inProcess?: boolean;

  /** Enqueues a job durably (when `send` resolves it survives a restart of this process). */
  send(job: DispatchJob, options?: DispatchSendOptions): Promise<void>;

  /** Starts delivering jobs to `handler`, at most `concurrency` at once, until stopped. */
  work(handler: DispatchHandler, options: DispatchWorkOptions): Promise<DispatchWorkerV1>;

  /** Releases connections the adapter opened itself (never a client the user passed in). */
  close?(): Promise<void>;
}

/** Checks a job's shape (a worker never trusts what an engine hands it). */
export function dispatchJobProblem(job: unknown): string | null {
  if (typeof job !== "object" || job === null) return "a dispatch job must be an object";
  const candidate = job as Record<string, unknown>;
  const text = (key: string) =>
    typeof candidate[key] === "string" &&
    (candidate[key] as string).length > 0 &&
    (candidate[key] as string).length <= 256;
  if (!text("threadId") || !text("scopeKey")) return "a dispatch job needs threadId and scopeKey";
  if (candidate.kind === "run") return text("runId") ? null : "a run job needs a runId";
  if (candidate.kind === "wake") {
    return text("at") && !Number.isNaN(Date.parse(candidate.at as string))
      ? null
      : "a wake job needs an ISO `at`";
  }
  return `unknown dispatch job kind ${JSON.stringify(candidate.kind)}`;
}
