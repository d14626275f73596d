/**
 * `npm run bench`: PAI's cost against the bare AI SDK loop and against the database's own floor,
 * measured in one process run and reported as ratios. See bench/README.md for how to read it.
 */
import { writeFileSync } from "node:fs";
import { kyselyStorage } from "@pai/storage-kysely";
import { memoryStorage } from "@pai/storage-memory";
import { benchCommitStatement } from "./commit-statement.ts";
import { countingStorage } from "./counting-storage.ts";
import { benchDispatch } from "./dispatch.ts";
import {
  type BenchEngine,
  openMariadb,
  openMemory,
  openPglite,
  openPostgres,
  openServerPool,
  openSqlite,
} from "./engines.ts";
import { logCommitCeiling, logFloor, measureCommitCeiling, measureSqlFloor, type SqlFloor } from "./floor.ts";
import { benchGrowth } from "./growth.ts";
import { benchSuspendResume, benchTwoStep, measureInProcessRows } from "./latency.ts";
import { benchParked } from "./parked.ts";
import { lines, log, results } from "./report.ts";
import { benchRoundTrips } from "./round-trips.ts";
import { runtimeOn, twoStepRun } from "./scenarios.ts";
import { evaluateTargets, logTargets, type TargetInputs } from "./targets.ts";
import { benchThroughput } from "./throughput.ts";

const servers = [
  { name: "postgres", open: openPostgres, off: process.env.PAI_BENCH_POSTGRES === "off" },
  { name: "mariadb", open: openMariadb, off: process.env.PAI_BENCH_MARIADB === "off" },
] as const;

// Postgres allows 100 connections by default; PAI's own pool (10) and notifier stay open beside the floor's.
const maxFloorConnections = { postgres: 75, mariadb: 100 };

async function openEngines(): Promise<BenchEngine[]> {
  const engines: BenchEngine[] = [await openMemory(), await openPglite(), await openSqlite()];
  for (const server of servers) {
    if (server.off) continue;
    try {
      engines.push(await server.open());
    } catch (error) {
      if (process.env.CI === "true") throw error;
      log(`(${server.name} unreachable: ${(error as Error).message}; skipped)`);
    }
  }
  return engines;
}

async function benchFloors(engines: BenchEngine[]) {
  const floors = new Map<string, SqlFloor>();
  for (const engine of engines) {
    if (!engine.sql) continue;
    floors.set(engine.name, await measureSqlFloor(engine.name, engine.sql.db));
  }
  logFloor([...floors.values()], log);
  results.floor = [...floors.values()];
  return floors;
}

/** The server engines' commits at 1, 10 and 100 clients, added to their floors (see `measureCommitCeiling`). */
async function benchCommitCeilings(engines: BenchEngine[], floors: Map<string, SqlFloor>) {
  for (const engine of engines) {
    const name = engine.name;
    const floor = floors.get(name);
    if (!engine.sql || !floor || (name !== "postgres" && name !== "mariadb")) continue;
    await measureCommitCeiling(floor, engine.sql.db, {
      openPool: (connections: number) => openServerPool(name, connections),
      maxConnections: maxFloorConnections[name],
    });
  }
  logCommitCeiling([...floors.values()], log);
}

async function main() {
  const engines = await openEngines();
  log(`# PAI benchmark (${new Date().toISOString()}, Node ${process.version})`);
  // PAI_BENCH_ONLY=parked runs just the parked-threads table (quick memory checks), =dispatch the
  // dispatch table, =growth the growth table three times, =commit the floor and the step commit,
  // =throughput the floor and the throughput table.
  const only = process.env.PAI_BENCH_ONLY;
  if (only === "commit") {
    await benchCommitStatement(engines, await benchFloors(engines));
    return finish(engines);
  }
  if (only === "throughput") {
    const floors = await benchFloors(engines);
    await benchCommitCeilings(engines, floors);
    await throughputTable(engines, floors);
    return finish(engines);
  }
  if (only === "dispatch") {
    await benchDispatch(engines);
    return finish(engines);
  }
  if (only === "growth") {
    // Three growth tables in a row: the target asks for the trend to hold run after run.
    const growthEngines = engines.filter((engine) => engine.name !== "sqlite" && engine.name !== "mariadb");
    const runs: unknown[] = [];
    for (let round = 0; round < 3; round++) runs.push(await benchGrowth(growthEngines));
    results.growthRuns = runs;
    return finish(engines);
  }
  // The in-process latency rows go first, before any SQL adapter's code runs (see measureInProcessRows).
  const early = only
    ? undefined
    : await measureInProcessRows(engines.find((engine) => engine.name === "memory"));
  const floors = only ? new Map<string, SqlFloor>() : await benchFloors(engines);
  if (early) {
    await benchCommitStatement(engines, floors);
    await benchTwoStep(engines, early);
    await benchSuspendResume(engines, early);
    await benchRoundTrips(engines);
    emptyMemoryStorage(engines);
    // Growth seeds thousands of messages per size: the in-process engines and Postgres show the trend.
    await benchGrowth(
      engines.filter(
        (engine) => engine.name === "memory" || engine.name === "pglite" || engine.name === "postgres",
      ),
    );
  }

  log();
  log("### Parked threads (each waiting on a pending action)");
  log(
    "| engine   | threads | heap delta MiB | of which the runtime's MiB | snapshots of driven threads held | recent-thread snapshots kept (at most 64) |",
  );
  log(
    "|----------|--------:|---------------:|---------------------------:|---------------------------------:|------------------------------------------:|",
  );
  const parked: unknown[] = [];
  for (const engine of engines.filter(
    (candidate) => candidate.name === "memory" || candidate.name === "postgres",
  )) {
    const result = await benchParked(() => runtimeOn(engine.storage, "approve", engine), engine.name, 10_000);
    parked.push(result);
    log(
      `| ${result.engine.padEnd(8)} | ${String(result.threads).padStart(7)} | ${result.heapDeltaMiB.toFixed(1).padStart(14)} | ${result.runtimeHeldMiB.toFixed(1).padStart(26)} | ${String(result.cachedSnapshots).padStart(32)} | ${String(result.recentSnapshots).padStart(41)} |`,
    );
  }
  results.parked = parked;

  if (!only) {
    emptyMemoryStorage(engines);
    await benchCommitCeilings(engines, floors);
    await throughputTable(engines, floors);
    await benchDispatch(engines);
  }
  await finish(engines);
}

async function throughputTable(engines: BenchEngine[], floors: Map<string, SqlFloor>) {
  log();
  log("### Throughput: concurrent two-step runs to completion, against the database's commit ceiling");
  log("| engine   | concurrency | runs | runs/second | commits/run | ceiling runs/s | of ceiling |");
  log("|----------|------------:|-----:|------------:|------------:|---------------:|--------------:|");
  const throughput: unknown[] = [];
  const runs = engines
    .filter((candidate) => candidate.name === "postgres" || candidate.name === "mariadb")
    .flatMap((engine) => {
      const entry = {
        engine: engine.name as string,
        storage: engine.storage,
        floor: floors.get(engine.name),
      };
      if (engine.name !== "postgres" || !engine.sql) return [entry];
      // What group commit buys: the same tables and notifier, every commit in its own statement.
      const ungrouped = kyselyStorage({
        db: engine.sql.db,
        tablePrefix: engine.sql.prefix,
        groupCommits: false,
        ...(engine.notifier ? { notifier: engine.notifier } : {}),
      });
      return [entry, { ...entry, engine: "postgres, groupCommits: false", storage: ungrouped }];
    });
  for (const run of runs) {
    const counting = countingStorage(run.storage, { bytes: false });
    throughput.push({
      engine: run.engine,
      rows: await benchThroughput(
        runtimeOn(counting.storage, "add"),
        counting.counters,
        run.engine,
        run.floor,
        twoStepRun,
        log,
      ),
    });
  }
  results.throughput = throughput;
}

/**
 * Gives the memory engine an empty storage and collects the old one. The shared one holds every
 * thread the tables before created (some 300 MB after the latency tables), which no process of a
 * Postgres deployment holds: with it alive, collecting that heap on the two cores Postgres also
 * uses swung the Postgres growth rows by 1–2 ms a turn, either way (bench/README.md, seventh pass).
 */
function emptyMemoryStorage(engines: BenchEngine[]) {
  const memory = engines.find((engine) => engine.name === "memory");
  if (memory) memory.storage = memoryStorage();
  (globalThis as { gc?: () => void }).gc?.();
}

async function finish(engines: BenchEngine[]) {
  for (const engine of engines) await engine.dispose();
  const targets = evaluateTargets(results as TargetInputs);
  results.targets = targets;
  logTargets(targets);
  results.table = lines.join("\n");
  writeFileSync(new URL("../results.json", import.meta.url), `${JSON.stringify(results, null, 2)}\n`);
  log();
  log("wrote bench/results.json");
}

await main();
