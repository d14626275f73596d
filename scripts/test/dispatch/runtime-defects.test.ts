/**
 * Runtime defects the dispatch cluster test (dispatch-cluster.test.ts) ran into, each reduced to
 * one process, an in-memory storage and an in-memory job queue (no services), kept as
 * regression tests. Fixed in e03a300 (the first two) and 9bd9e98 (the third).
 */
import {
  createPai,
  type DispatchV1,
  defineAgent,
  defineTool,
  type Pai,
  type StorageV1,
  scopeFromIdentity,
} from "@pai/core";
import { scriptedModel } from "@pai/core/testing";
import { memoryStorage } from "@pai/storage-memory";
import { afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { memoryQueue } from "./memory-queue.ts";

const identity = { scopeKey: "s", userKey: "u" };
const agent = defineAgent({ tools: {} });
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A model that answers "done" after `delayMs`. */
function slowModel(delayMs: number) {
  const base = scriptedModel(() => ({ text: "done" }));
  return {
    ...base,
    doStream: async (call: any) => {
      await sleep(delayMs);
      return base.doStream(call);
    },
  } as typeof base;
}

const open = (storage: StorageV1, dispatch: DispatchV1, delayMs = 0) =>
  createPai({
    agents: { agent },
    storage,
    model: slowModel(delayMs),
    dispatch,
    scope: scopeFromIdentity,
    leaseMs: 2_000,
  });

async function startRuns(pai: Pai, count: number): Promise<string[]> {
  const threadIds: string[] = [];
  for (let index = 0; index < count; index++) {
    const thread = await pai.trusted.createThread({ scope: { scopeKey: "s", userKey: "u" } });
    await pai.service.threads.send({
      identity,
      threadId: thread.threadId,
      message: { text: `run ${index}` },
    });
    threadIds.push(thread.threadId);
  }
  return threadIds;
}

async function untilEnded(pai: Pai, threadIds: string[], timeoutMs = 20_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const snapshots = await Promise.all(
      threadIds.map((threadId) => pai.service.threads.get({ identity, threadId })),
    );
    const runs = snapshots.flatMap((snapshot) => snapshot.runs);
    if (runs.every((run) => run.status === "completed" || run.status === "failed")) return runs;
    if (Date.now() > deadline)
      throw new Error(`runs did not end: ${runs.map((run) => run.status).join(", ")}`);
    await sleep(50);
  }
}

describe("runtime defects found by the dispatch cluster test", () => {
  const cleanup: Array<() => Promise<void>> = [];
  afterEach(async () => {
    for (const step of cleanup.splice(0).reverse()) await step();
  });

  /**
   * Every worker's recovery pass (`recover()` → `RunDriver.recover` → `RunDispatch.drive`) sends a
   * run job again for every run that is `running` without a lease, and a run an API instance
   * started has no lease until a worker takes its job. So runs that merely wait their turn in
   * the engine's queue, with no process dead anywhere, are sent again on every pass of every
   * worker (up to 50 per pass; the sends are not awaited, so nothing pushes back). In the cluster
   * test (3 workers, recovery every 500 ms, pg-boss) this sent ~77 jobs per run, exhausted
   * pg-boss's connection pool ("timeout exceeded when trying to connect") and starved the
   * workers' own job fetches: runs stalled for minutes (400 of 500 runs unfinished).
   */
  it("runs waiting in the engine's queue are not sent again while their workers are alive", async () => {
    const storage = memoryStorage();
    const engine = memoryQueue();
    const api = open(storage, engine.dispatch);
    const worker = open(storage, engine.dispatch, 100);
    const threadIds = await startRuns(api, 20);
    // One slot, 100 ms a run: the runs wait their turn for about two seconds.
    const started = Date.now();
    const running = await worker.startWorker({ concurrency: 1, recoveryIntervalMs: 100 });
    cleanup.push(api.close, worker.close, running.stop);
    const runs = await untilEnded(api, threadIds);
    const elapsed = Date.now() - started;
    expect(runs.map((run) => run.status)).toEqual(threadIds.map(() => "completed"));
    const runJobs = engine.sent.filter((job) => job.kind === "run").length;
    console.log(`[runtime defects] 20 runs, nobody died: ${runJobs} run jobs sent in ${elapsed} ms`);
    // One job per run from the API instance, and at most one more per run and lease length
    // (2 s) that a run waits (before the fix: a re-send per run on every 100 ms pass, ~240).
    expect(runJobs).toBeLessThanOrEqual(20 * (1 + Math.ceil(elapsed / 2_000)));
  });

  /**
   * A storage error while a worker takes a run's lease (in the cluster test: Postgres answering
   * "sorry, too many clients already" for a moment) fails the run for good ("An internal error
   * occurred"): `RunDriver.continueRun` sends every error but LeaseBusy/LeaseLost to `failRun`.
   * The storage was fine a moment later; with a job engine, throwing from the job handler would
   * have had the job delivered again, and even without one the lease would expire and recovery
   * would adopt the run. A passing outage of the database should not end runs as failed.
   */
  it("a run survives a storage error while a worker takes its lease", async () => {
    const inner = memoryStorage();
    let failures = 1;
    const storage: StorageV1 = new Proxy(inner, {
      get(target, key) {
        if (key === "acquireRunLease") {
          return async (input: Parameters<StorageV1["acquireRunLease"]>[0]) => {
            if (failures-- > 0) throw new Error("sorry, too many clients already");
            return target.acquireRunLease(input);
          };
        }
        const value = Reflect.get(target, key, target);
        return typeof value === "function" ? value.bind(target) : value;
      },
    });
    const engine = memoryQueue();
    const api = open(storage, engine.dispatch);
    const worker = open(storage, engine.dispatch);
    const threadIds = await startRuns(api, 1);
    const running = await worker.startWorker({ concurrency: 1, recoveryIntervalMs: 200 });
    cleanup.push(api.close, worker.close, running.stop);
    const runs = await untilEnded(api, threadIds);
    expect(runs.map((run) => [run.status, run.error])).toEqual([["completed", null]]);
  });

  /**
   * A worker whose step commit lands late (its lease expired while the commit waited, e.g. for a
   * pooled connection on a loaded machine) and another worker that adopted the run meanwhile:
   * the version fence keeps the adopter's step out (its step was prepared on the old version),
   * as it should, but the adopter then fails the whole run with "Run … advanced to step 1 while
   * step 1 was prepared; the step is dropped." (`commitStep` rejects with CONFLICT, `modelStep`
   * rethrows, `RunDriver.continueRun` sends it to `failRun`). Seen in the cluster test on
   * pg-boss. The first worker's step is committed and valid: the run should go on (the adopter
   * should stop driving, as after a lost lease, or look again), not end as failed.
   */
  it("a step dropped by the version fence does not fail the run", async () => {
    const storage = memoryStorage();
    const noop = defineTool({
      id: "test.noop.v1",
      description: "Does nothing",
      inputSchema: z.object({}),
      outputSchema: z.object({ ok: z.boolean() }),
      execute: async () => ({ ok: true }),
    });
    const toolAgent = defineAgent({ tools: { noop } });
    // Both instances: a tool call first, then an answer once a tool result is in the prompt.
    const script = (delayMs: () => number) => {
      const base = scriptedModel((call) =>
        call.prompt.some((message) => message.role === "tool")
          ? { text: "done" }
          : { toolCalls: [{ toolName: "noop", input: {} }] },
      );
      return {
        ...base,
        doStream: async (call: any) => {
          await sleep(delayMs());
          return base.doStream(call);
        },
      } as typeof base;
    };
    // Instance A stalls for 2.5 s on every storage call once its first model call returned: its
    // step commit passes the lease check at once, then lands after its lease expired.
    let stallUntil = 0;
    const stalling: StorageV1 = new Proxy(storage, {
      get(target, key) {
        const value = Reflect.get(target, key, target);
        if (typeof value !== "function") return value;
        return async (...args: unknown[]) => {
          const wait = stallUntil - Date.now();
          if (wait > 0) await sleep(wait);
          return value.apply(target, args);
        };
      },
    });
    let firstCall = true;
    const a = createPai({
      agents: { agent: toolAgent },
      storage: stalling,
      model: script(() => {
        if (firstCall) {
          firstCall = false;
          // The stall starts as the model call returns (the delay below is 0).
          setTimeout(() => {
            stallUntil = Date.now() + 2_500;
          }, 0);
        }
        return 0;
      }),
      scope: scopeFromIdentity,
      leaseMs: 1_000,
    });
    // Instance B adopts the run once A's lease expired; its model call outlasts A's stall.
    const b = createPai({
      agents: { agent: toolAgent },
      storage,
      model: script(() => 2_000),
      scope: scopeFromIdentity,
      leaseMs: 1_000,
    });
    cleanup.push(a.close, b.close);
    const thread = await a.trusted.createThread({ scope: { scopeKey: "s", userKey: "u" } });
    await a.service.threads.send({ identity, threadId: thread.threadId, message: { text: "go" } });
    // B adopts the run once A's lease (1 s) expired under its stall.
    const adoptBy = Date.now() + 5_000;
    while ((await b.recover()) === 0) {
      if (Date.now() > adoptBy) throw new Error("B never adopted the run");
      await sleep(100);
    }
    const stopRecovery = b.startRecovery({ intervalMs: 200 });
    cleanup.push(async () => stopRecovery());
    const runs = await untilEnded(b, [thread.threadId], 15_000);
    expect(runs.map((run) => [run.status, run.error])).toEqual([["completed", null]]);
  });
});
