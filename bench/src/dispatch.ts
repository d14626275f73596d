// The dispatch table: how long a committed run waits for its first model call, and runs per
// second with one and two workers, in process and through each job engine, on Postgres storage.
import { createAgentRuntime, type DispatchV1, type Pai, type PaiWorker, scopeFromIdentity } from "@pai/core";
import {
  bullMqEngine,
  type DispatchEngine,
  pgBossEngine,
  redisProblem,
  redisUrl,
} from "./dispatch-engines.ts";
import type { BenchEngine } from "./engines.ts";
import { benchAgent, turnModel } from "./fixtures.ts";
import { formatMs } from "./harness.ts";
import { log, results } from "./report.ts";
import { RunTracker } from "./run-tracker.ts";
import { identity } from "./scenarios.ts";

const runs = Number(process.env.PAI_BENCH_DISPATCH_RUNS ?? 200);
const samples = Number(process.env.PAI_BENCH_DISPATCH_SAMPLES ?? 50);
// One slot per connection of the storage pool the instances share (openPostgres: 10).
const concurrency = Number(process.env.PAI_BENCH_DISPATCH_CONCURRENCY ?? 10);
const warmupRuns = 20;
const timeoutMs = 30_000;

/** Runtime instances of one row: who sends, and how another driver joins. */
type Setup = {
  /** Create threads and send to them, in turn. */
  senders: Pai[];
  /** The first call adds the driver; the second makes it two. */
  addDriver(): Promise<void>;
  close(): Promise<void>;
};

function instance(engine: BenchEngine, tracker: RunTracker, instanceId: string, dispatch?: DispatchV1) {
  return createAgentRuntime({
    scope: scopeFromIdentity,
    agent: benchAgent,
    storage: engine.storage,
    model: turnModel("add"),
    instanceId,
    observers: [tracker.observer],
    ...(engine.notifier ? { notifier: engine.notifier } : {}),
    ...(dispatch ? { dispatch } : {}),
  });
}

/** No dispatch: every instance drives what it commits, so a second driver is a second sender too. */
function inProcessSetup(engine: BenchEngine, tracker: RunTracker): Setup {
  const instances: Pai[] = [];
  return {
    senders: instances,
    async addDriver() {
      instances.push(instance(engine, tracker, `bench-in-process-${instances.length + 1}`));
    },
    async close() {
      for (const pai of instances) await pai.close();
    },
  };
}

/** One API instance that only sends; workers each with their own instance id and dispatch. */
function engineSetup(engine: BenchEngine, tracker: RunTracker, jobs: DispatchEngine): Setup {
  const dispatches: DispatchV1[] = [];
  const open = () => {
    const dispatch = tracker.timed(jobs.open());
    dispatches.push(dispatch);
    return dispatch;
  };
  const api = instance(engine, tracker, `bench-${jobs.name}-api`, open());
  const instances: Pai[] = [api];
  const workers: PaiWorker[] = [];
  return {
    senders: [api],
    async addDriver() {
      const pai = instance(engine, tracker, `bench-${jobs.name}-worker-${workers.length + 1}`, open());
      instances.push(pai);
      workers.push(await pai.startWorker({ concurrency }));
    },
    async close() {
      try {
        for (const worker of workers) await worker.stop();
        for (const pai of instances) await pai.close();
        for (const dispatch of dispatches) await dispatch.close?.();
      } finally {
        await jobs.drop();
      }
    },
  };
}

function percentile(values: number[], p: number) {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil(p * sorted.length) - 1)]!;
}

async function createThreads(senders: Pai[], count: number) {
  return Promise.all(
    Array.from({ length: count }, async (_, index) => {
      const thread = await senders[index % senders.length]!.service.threads.create({ identity });
      return thread.threadId;
    }),
  );
}

/** Sends to every thread at once and waits for all runs to end; runs per second from the first send. */
async function runBatch(senders: Pai[], tracker: RunTracker, count: number) {
  const threadIds = await createThreads(senders, count);
  const started = performance.now();
  await Promise.all(
    threadIds.map((threadId, index) =>
      senders[index % senders.length]!.service.threads.send({
        identity,
        threadId,
        message: { text: "1+2?" },
      }),
    ),
  );
  await tracker.ended(threadIds, timeoutMs);
  return count / ((performance.now() - started) / 1000);
}

/** One run at a time on an idle queue: from `send` resolving (the commit) to the first model call. */
async function commitToModelCall(sender: Pai, tracker: RunTracker) {
  const latencies: number[] = [];
  const deliveries: number[] = [];
  for (let index = 0; index < samples; index++) {
    const { threadId } = await sender.service.threads.create({ identity });
    await sender.service.threads.send({ identity, threadId, message: { text: "1+2?" } });
    const committed = performance.now();
    await tracker.ended([threadId], timeoutMs);
    latencies.push(tracker.firstModelCall.get(threadId)! - committed);
    const delivered = tracker.firstDelivery.get(threadId);
    if (delivered !== undefined) deliveries.push(delivered - committed);
  }
  return {
    medianMs: percentile(latencies, 0.5),
    p95Ms: percentile(latencies, 0.95),
    deliveryMedianMs: deliveries.length > 0 ? percentile(deliveries, 0.5) : null,
    samples: latencies.length,
  };
}

async function measureRow(setup: Setup, tracker: RunTracker) {
  try {
    await setup.addDriver();
    // Warms connections, the engine's first start and the JIT before anything is timed.
    await runBatch(setup.senders, tracker, warmupRuns);
    const latency = await commitToModelCall(setup.senders[0]!, tracker);
    const oneWorker = await runBatch(setup.senders, tracker, runs);
    await setup.addDriver();
    await runBatch(setup.senders, tracker, warmupRuns);
    const twoWorkers = await runBatch(setup.senders, tracker, runs);
    return { ...latency, oneWorker, twoWorkers };
  } finally {
    await setup.close();
  }
}

/** Which engines to run: pg-boss always (Postgres is there), BullMQ when Redis answers. */
async function jobEngines(postgres: BenchEngine): Promise<DispatchEngine[]> {
  const engines = [pgBossEngine(postgres.sql!.db)];
  if (process.env.PAI_BENCH_REDIS === "off") return engines;
  const problem = await redisProblem();
  if (problem === null) return [...engines, bullMqEngine()];
  if (process.env.CI === "true") throw new Error(`bench: Redis at ${redisUrl} is unreachable: ${problem}`);
  log(`(redis unreachable at ${redisUrl}: ${problem}; bullmq row skipped)`);
  return engines;
}

export async function benchDispatch(engines: BenchEngine[]) {
  const started = performance.now();
  log();
  log(
    "### Dispatch: commit to first model call, and runs per second with 1 and 2 workers (Postgres storage)",
  );
  const postgres = engines.find((engine) => engine.name === "postgres");
  if (!postgres) {
    log("(no Postgres: dispatch table skipped)");
    return;
  }
  const jobs = await jobEngines(postgres);
  log(
    "| dispatch   | latency median ms | latency p95 ms | of which to handler ms | samples | runs/s, 1 worker | runs/s, 2 workers |",
  );
  log(
    "|------------|------------------:|---------------:|-----------------------:|--------:|-----------------:|------------------:|",
  );
  const rows: unknown[] = [];
  const rowsToRun = [
    { name: "in-process", setup: (tracker: RunTracker) => inProcessSetup(postgres, tracker) },
    ...jobs.map((job) => ({
      name: job.name,
      setup: (tracker: RunTracker) => engineSetup(postgres, tracker, job),
    })),
  ];
  for (const { name, setup } of rowsToRun) {
    const tracker = new RunTracker();
    const row = await measureRow(setup(tracker), tracker);
    rows.push({ dispatch: name, ...row });
    log(
      `| ${name.padEnd(10)} | ${formatMs(row.medianMs).padStart(17)} | ${formatMs(row.p95Ms).padStart(14)} | ${(row.deliveryMedianMs === null ? "-" : formatMs(row.deliveryMedianMs)).padStart(22)} | ${String(row.samples).padStart(7)} | ${row.oneWorker.toFixed(1).padStart(16)} | ${row.twoWorkers.toFixed(1).padStart(17)} |`,
    );
  }
  const settings = [
    `${runs} runs per runs/s cell, sent at once across ${runs} threads; latency is one run at a time on an idle queue`,
    `in-process: no dispatch, all ${runs} runs driven at once; "2 workers" is two instances each sending and driving half`,
    `workers: startWorker({ concurrency: ${concurrency} }), each its own runtime instance (instanceId) and dispatch, in this process; one API instance sends; all share the bench's Postgres storage (one pool of 10) and notifier`,
    ...jobs.map((job) => job.settings),
  ];
  for (const line of settings) log(`- ${line}`);
  for (const job of jobs)
    if (job.errors.length > 0)
      log(`- ${job.name} reported ${job.errors.length} errors: ${String(job.errors[0])}`);
  log(`- the section took ${((performance.now() - started) / 1000).toFixed(1)} s`);
  results.dispatch = { rows, settings };
}
