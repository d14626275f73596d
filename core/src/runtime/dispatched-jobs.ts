import { PaiError } from "../errors/pai-error.js";
import type { DispatchJob } from "../ports/dispatch.js";
import { type RunDriver, scopeOf } from "./run-driver.js";
import type { RuntimeCore } from "./runtime-core.js";

/** What job handling needs of the engine besides the shared core. */
export type JobHost = RuntimeCore & {
  wake(threadId: string): Promise<unknown>;
  hasAgent(agentId: string): boolean;
};

/**
 * One delivery of a dispatched job. A run job drives the run unless another instance holds it
 * (that one drives it; if it dies, the expired lease makes the run recoverable); a run that
 * parked or ended, or belongs to an agent this process does not serve, is acknowledged.
 * Throws only to have the job delivered again (a draining worker handed the run back).
 */
export async function handleDispatchedJob(rt: JobHost, driver: RunDriver, job: DispatchJob): Promise<void> {
  if (job.kind === "wake") {
    await rt.wake(job.threadId);
    return;
  }
  const snapshot = await rt.store.load(job.threadId);
  const run = snapshot?.runs.find((candidate) => candidate.runId === job.runId);
  if (!snapshot || !run || !rt.hasAgent(snapshot.thread.agentId)) return;
  if (run.status === "queued") {
    await driver.startQueued(job.threadId);
    return;
  }
  if (run.status !== "running") return;
  await driver.continueRun(job.threadId, job.runId, run.identity ?? null, scopeOf(snapshot), { wait: false });
  if (rt.handingBack)
    throw new PaiError("CONFLICT", `Run ${job.runId} was handed back by a draining worker.`);
}

/**
 * Threads whose stored `wakeAt` passed: woken here with the in-process dispatch, or sent to the
 * engine as wake jobs (a worker wakes them; a duplicate wake-up does nothing).
 */
export async function wakeDueThreads(rt: JobHost, limit: number): Promise<void> {
  const now = rt.now();
  const due = await rt.store.storage.listDueThreads({ now, limit });
  for (const { threadId } of due) {
    if (rt.dispatch.drivesHere) {
      await rt.wake(threadId).catch((error) => rt.reportError({ error, phase: "recovery", threadId }));
      continue;
    }
    const snapshot = await rt.store.load(threadId);
    if (snapshot) rt.dispatch.send({ kind: "wake", threadId, scopeKey: snapshot.thread.scopeKey, at: now });
  }
}
