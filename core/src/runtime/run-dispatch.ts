import type { DispatchJob, DispatchV1 } from "../ports/dispatch.js";
import { inProcessDispatch } from "../ports/in-process-dispatch.js";
import { shouldResendRun } from "../state/deciders/run-deciders.js";
import type { RunRow } from "../state/rows.js";
import type { RuntimeScope } from "./definition-shapes.js";
import type { RunDriver } from "./run-driver.js";
import type { RuntimeCore } from "./runtime-core.js";

/**
 * Where the runs a commit starts or continues are driven. With the in-process dispatch (the
 * default) this process drives them at once: the commit took the lease, no engine round trip.
 * With a job engine the run goes out as a job, and whichever worker takes it drives it; this
 * process (an API instance) never drives a run it did not take from the engine.
 */
export class RunDispatch {
  readonly port: DispatchV1;
  /** This process drives what it commits (it takes the lease in the commit that starts a run). */
  readonly drivesHere: boolean;
  /** When this process last sent each run's job (ms), so recovery passes do not flood the engine. */
  readonly #sent = new Map<string, number>();

  constructor(
    readonly rt: RuntimeCore,
    readonly driver: RunDriver,
    port: DispatchV1 | undefined,
  ) {
    this.port = port ?? inProcessDispatch();
    this.drivesHere = this.port.inProcess === true;
  }

  /**
   * Drives a run here, or hands it to the engine. A run this process is already driving is
   * always looked at again here (its driver holds the lease a worker would wait for).
   */
  drive(threadId: string, runId: string, scopeKey: string, identity: unknown, scope: RuntimeScope): void {
    if (this.drivesHere || this.rt.registry.hasDriver(runId)) {
      void this.driver.continueRun(threadId, runId, identity, scope);
      return;
    }
    this.send({ kind: "run", threadId, runId, scopeKey });
  }

  /**
   * Whether a recovery pass should send a running, unleased run's job again (see
   * `shouldResendRun`); records the send it allows.
   */
  resendDue(run: RunRow): boolean {
    const now = Date.parse(this.rt.now());
    const due = shouldResendRun(run, {
      now,
      leaseMs: this.leaseMs,
      lastSentAt: this.#sent.get(run.runId) ?? null,
    });
    if (due) this.#sent.set(run.runId, now);
    return due;
  }

  /** Forgets sends older than two lease lengths (once per recovery pass, not per run). */
  forgetOldSends(): void {
    const now = Date.parse(this.rt.now());
    for (const [runId, at] of this.#sent) if (now - at > this.leaseMs * 2) this.#sent.delete(runId);
  }

  get leaseMs(): number {
    return this.rt.leases.leaseMs;
  }

  /** Wakes the thread at `at` (deadlines, schedules). */
  wakeAt(threadId: string, scopeKey: string, at: string): void {
    this.send({ kind: "wake", threadId, scopeKey, at }, at);
  }

  /**
   * Sends a job; a failed send is reported, never thrown into the commit that asked for it:
   * storage still says the run is running without a lease (or the thread is due), so the next
   * recovery pass sends it again.
   */
  send(job: DispatchJob, notBefore?: string): void {
    void this.port.send(job, notBefore === undefined ? {} : { notBefore }).catch((error) =>
      this.rt.reportError({
        error,
        phase: "recovery",
        threadId: job.threadId,
        ...(job.kind === "run" ? { runId: job.runId } : {}),
      }),
    );
  }
}
