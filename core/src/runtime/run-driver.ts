import { PaiError, REDACTED_ERROR_MESSAGE } from "../errors/pai-error.js";
import {
  decideFinish,
  decideInterrupt,
  decideNextMove,
  decidePark,
  decideStartQueued,
} from "../state/deciders/run-deciders.js";
import type { ThreadSnapshot } from "../state/snapshot.js";
import type { RuntimeScope } from "./definition-shapes.js";
import { modelStep } from "./model-step.js";
import { RequestContext } from "./request-context.js";
import { resumeQueuedCall } from "./resume-queued-call.js";
import { LeaseBusyError, LeaseLostError } from "./run-leases.js";
import type { RuntimeCore } from "./runtime-core.js";
import { hookFailureError } from "./tool-hooks.js";

/** Steps in a row the version fence may drop before the driver gives up on the run. */
const MAX_DROPPED_STEPS = 3;

/**
 * Driving a run: at most one driver per run in this process holds the run's lease and loops
 * on `decideNextMove` (interrupt a dead process's calls, park, finish, or take a model step)
 * until the run waits, ends, or another instance takes it over. Also where runs finish, fail,
 * get dequeued and are adopted after a crash.
 */
export class RunDriver {
  constructor(readonly rt: RuntimeCore) {}

  /**
   * Drives a run; a call while its driver is active asks that driver to look again. With
   * `wait: false` (a dispatched job) a run another instance holds is left to it.
   */
  continueRun(
    threadId: string,
    runId: string,
    identity: unknown,
    scope: RuntimeScope,
    options: { wait?: boolean } = {},
  ): Promise<void> {
    const { registry, store, leases } = this.rt;
    const existing = registry.driver(runId);
    if (existing) {
      existing.again = true;
      return existing.promise;
    }
    const driver = { again: true, promise: Promise.resolve() };
    registry.setDriver(runId, driver);
    driver.promise = registry.track(
      threadId,
      (async () => {
        const release = store.hold(threadId);
        let releaseLease: (() => Promise<void>) | undefined;
        try {
          releaseLease = await leases.hold(threadId, runId, options);
          while (driver.again && !this.rt.closed) {
            driver.again = false;
            await this.#advance(threadId, runId, identity, scope, driver);
          }
        } catch (error) {
          if (error instanceof LeaseBusyError) return;
          if (releaseLease === undefined) {
            // Taking the lease failed (the database refused a connection, say): this process
            // never drove the run, so there is nothing to fail; it stays recoverable.
            this.rt.reportError({ error, phase: "run", threadId, runId });
            return;
          }
          if (error instanceof LeaseLostError) this.rt.reportError({ error, phase: "run", threadId, runId });
          // A draining worker stopped it: the run is handed back, not failed.
          else if (this.rt.handingBack) return;
          else await this.failRun(threadId, runId, error);
        } finally {
          registry.dropDriver(runId);
          await releaseLease?.();
          release();
        }
      })(),
    );
    return driver.promise;
  }

  async #advance(
    threadId: string,
    runId: string,
    identity: unknown,
    scope: RuntimeScope,
    driver: { again: boolean },
  ): Promise<void> {
    const rt = this.rt;
    let dropped = 0;
    for (;;) {
      const snapshot = await rt.store.snapshot(threadId);
      const agentEntry = rt.agent(snapshot.thread.agentId);
      const move = decideNextMove(snapshot, {
        runId,
        inflight: rt.registry.inflightOf(runId),
        maxSteps: agentEntry.definition.maxSteps ?? rt.options.maxSteps ?? 20,
      });
      switch (move.type) {
        case "stop":
        case "await-calls":
          return;
        case "parked":
          this.parked(snapshot, runId);
          return;
        case "interrupt": {
          // Calls that started in a process that died: recorded as interrupted, never re-run.
          const keep = rt.registry.inflightOf(runId);
          await rt.writer.commit(threadId, (state, now) => decideInterrupt(state, runId, now, keep), {
            fence: runId,
          });
          continue;
        }
        case "resume": {
          const failure = await resumeQueuedCall(rt, snapshot, runId, move.action, identity, scope);
          if (failure) {
            await this.failRun(threadId, runId, hookFailureError(failure));
            return;
          }
          continue;
        }
        case "park":
          await rt.writer.commit(threadId, (state, now) => decidePark(state, runId, now), { fence: runId });
          return;
        case "finish":
          await this.finishRun(threadId, runId, "completed", null);
          return;
        case "step": {
          // Checked before the model call too: a process that lost the run spends no tokens on it.
          await rt.leases.assert(runId);
          const run = move.run;
          const request = new RequestContext(
            agentEntry.definition,
            run.identity ?? identity,
            scope,
            run.clientData ?? null,
            threadId,
            rt.registry.abortSignal(runId),
          );
          const stepIds = {
            threadId,
            runId,
            agentId: agentEntry.id,
            scopeKey: snapshot.thread.scopeKey,
            step: run.step + 1,
          };
          rt.emit({ type: "step-start", ...stepIds });
          let step: Awaited<ReturnType<typeof modelStep>>;
          try {
            step = await modelStep(rt, snapshot, run, agentEntry, request);
          } catch (error) {
            rt.emit({ type: "step-end", ...stepIds, error });
            // The run moved on while the model answered (a stalled instance's step landed first):
            // the version fence dropped this step. Look again rather than fail the run, unless
            // the step was aborted (cancelled, runtime closing) or keeps being dropped.
            if (
              PaiError.isInstance(error) &&
              error.code === "CONFLICT" &&
              !request.signal.aborted &&
              !rt.closed &&
              ++dropped <= MAX_DROPPED_STEPS
            ) {
              continue;
            }
            throw error;
          }
          rt.emit({ type: "step-end", ...stepIds });
          await step.carryOut?.();
          if (step.hookFailure) {
            await this.failRun(threadId, runId, hookFailureError(step.hookFailure));
            return;
          }
          if (step.completed) return;
          driver.again = false;
        }
      }
    }
  }

  /**
   * A parked run holds no lease, capabilities or bookkeeping in this process. Its snapshot and
   * model history stay among the bounded ones kept of recent threads, for a quick resume.
   */
  parked(snapshot: ThreadSnapshot, runId: string): void {
    this.rt.leases.releaseNotNeeded(runId);
    this.rt.capabilities.threadIdle(snapshot.thread.scopeKey, snapshot.thread.threadId);
    this.rt.registry.forget(runId);
  }

  async finishRun(threadId: string, runId: string, status: "completed" | "failed", error: string | null) {
    await this.rt.writer.commit(threadId, (state, now) => decideFinish(state, { runId, status, error }, now));
  }

  /** Ends a run as failed after an unexpected error (reported in full; the run keeps a client-safe message). */
  async failRun(threadId: string, runId: string, error: unknown): Promise<void> {
    if (this.rt.closed) return;
    this.rt.reportError({ error, phase: "run", threadId, runId });
    const message =
      PaiError.isInstance(error) && error.code !== "INTERNAL" ? error.message : REDACTED_ERROR_MESSAGE;
    try {
      await this.finishRun(threadId, runId, "failed", message);
    } catch (finishError) {
      this.rt.reportError({ error: finishError, phase: "run", threadId, runId });
    }
  }

  /**
   * Starts the thread's next queued run once nothing is active. `known` is the state just
   * committed: when it has nothing to dequeue there is no write to make and nothing to read.
   */
  async startQueued(threadId: string, known?: ThreadSnapshot): Promise<void> {
    if (known && !known.runs.some((run) => run.status === "queued")) return;
    await this.rt.writer.commit(threadId, (state, now) => decideStartQueued(state, now), {
      ...(known ? { fresh: known } : {}),
    });
  }

  /**
   * Adopts runs whose lease expired (their process died): interrupted tool calls become
   * `output-error`, an uncommitted model step is issued again, and queued runs start.
   */
  async recover(options: { limit?: number } = {}): Promise<number> {
    const rt = this.rt;
    const candidates = await rt.store.storage.listRecoverableRuns({
      now: rt.now(),
      limit: options.limit ?? 50,
    });
    let adopted = 0;
    rt.dispatch.forgetOldSends();
    for (const candidate of candidates) {
      if (rt.registry.hasDriver(candidate.runId)) continue;
      try {
        const snapshot = await rt.store.load(candidate.threadId);
        const run = snapshot?.runs.find((item) => item.runId === candidate.runId);
        if (!snapshot || !run) continue;
        try {
          rt.agent(snapshot.thread.agentId);
        } catch {
          continue;
        }
        if (run.status === "queued") {
          adopted++;
          await this.startQueued(candidate.threadId);
          continue;
        }
        if (!rt.dispatch.drivesHere && !rt.dispatch.resendDue(run)) continue;
        adopted++;
        rt.dispatch.drive(
          candidate.threadId,
          candidate.runId,
          snapshot.thread.scopeKey,
          run.identity ?? null,
          scopeOf(snapshot),
        );
      } catch (error) {
        rt.reportError({ error, phase: "recovery", threadId: candidate.threadId, runId: candidate.runId });
      }
    }
    return adopted;
  }
}

export function scopeOf(snapshot: ThreadSnapshot): RuntimeScope {
  return { scopeKey: snapshot.thread.scopeKey, userKey: snapshot.thread.userKey };
}
