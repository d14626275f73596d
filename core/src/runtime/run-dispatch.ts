import type { DispatchJob, DispatchV1 } from "../ports/dispatch.js";
import { inProcessDispatch } from "../ports/in-process-dispatch.js";
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
