/**
 * Acceptance test of job-engine dispatch: 2 API processes and 3 worker processes on Postgres,
 * 500 runs dispatched, workers SIGKILLed at random moments (at least 20 kills): every run
 * finishes, none is driven by two processes at once, no committed output is lost or doubled.
 * Once per engine: pg-boss (jobs in Postgres) and BullMQ (jobs in Redis); storage is Postgres.
 *
 * Heavy (minutes, child processes on the built packages): `npm run build -w @pai/core
 * -w @pai/storage-kysely -w @pai/dispatch-pgboss -w @pai/dispatch-bullmq`, then
 * `npx vitest run --typecheck.enabled=false scripts/test/dispatch`. Without Postgres (or Redis
 * for BullMQ) the suite is skipped, except under CI=true where it fails. Services:
 * PAI_TEST_POSTGRES_URL, PAI_TEST_REDIS_URL. For a closer look: PAI_DISPATCH_CLUSTER_RUNS,
 * PAI_DISPATCH_CLUSTER_KILLS, PAI_DISPATCH_CLUSTER_RECOVERY_MS change the numbers, and
 * PAI_DISPATCH_CLUSTER_DUMP=/tmp/x writes every line every process printed to /tmp/x.<engine>.jsonl.
 *
 * The scenario, the checks and what the report lines mean are in cluster.ts.
 */
import { describe, expect, it } from "vitest";
import { assertChildProcessesCanRun, type ClusterOptions, runCluster, unreachable } from "./cluster.ts";
import type { Engine } from "./fixtures/cluster-runtime.ts";

// Overridable for a quick local look (the acceptance numbers are the defaults).
const RUNS = Number(process.env.PAI_DISPATCH_CLUSTER_RUNS ?? 500);
const MIN_KILLS = Number(process.env.PAI_DISPATCH_CLUSTER_KILLS ?? 20);

const options = (engine: Engine): ClusterOptions => ({
  engine,
  runs: RUNS,
  apiProcesses: 2,
  workers: 3,
  standbys: 2,
  minKills: MIN_KILLS,
  killEveryMs: [1_000, 2_000],
  completeWithinMs: 90_000,
  leaseMs: 2_000,
  worker: {
    concurrency: 8,
    maxPerScope: 4,
    drainMs: 5_000,
    recoveryIntervalMs: Number(process.env.PAI_DISPATCH_CLUSTER_RECOVERY_MS ?? 500),
  },
  modelDelayMs: [2, 50],
  toolDelayMs: [2, 25],
});

for (const engine of ["pgboss", "bullmq"] as const) {
  const label = engine === "pgboss" ? "pg-boss" : "BullMQ";
  const problem = await unreachable(engine);
  // Outside CI a missing service skips (with the reason); under CI=true it fails.
  const skip = problem !== null && process.env.CI !== "true";
  if (skip) console.warn(`[dispatch cluster: ${label}] skipped: ${problem}`);
  describe.skipIf(skip)(`dispatch cluster on ${label} (storage: Postgres)`, () => {
    it(`2 API + 3 worker processes, ${RUNS} runs, at least ${MIN_KILLS} worker SIGKILLs: every run completes once`, {
      timeout: 300_000,
    }, async () => {
      if (problem !== null)
        throw new Error(`CI=true and the ${label} cluster test cannot reach its services: ${problem}`);
      assertChildProcessesCanRun(engine);
      const outcome = await runCluster(options(engine));
      console.log(`[dispatch cluster: ${label}]\n  ${outcome.report.join("\n  ")}`);
      expect(outcome.failures.slice(0, 30)).toEqual([]);
    });
  });
}
