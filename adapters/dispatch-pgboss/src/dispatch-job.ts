import type { DispatchJob } from "@pai/core";

/**
 * The job's own fields and nothing else: what is stored is exactly the port's shape, whatever
 * else the object carried. Call only on a job `dispatchJobProblem` accepted.
 */
export function pickDispatchJob(job: DispatchJob): DispatchJob {
  return job.kind === "run"
    ? { kind: "run", threadId: job.threadId, runId: job.runId, scopeKey: job.scopeKey }
    : { kind: "wake", threadId: job.threadId, scopeKey: job.scopeKey, at: job.at };
}
