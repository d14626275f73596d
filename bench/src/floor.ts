/**
 * The physical floor PAI's rows are compared with: what the database itself costs for a
 * round trip (`select 1`), for one durable 1 KB commit, and how many such commits per second it
 * takes from 1, 10 and 100 concurrent clients. Measured in the same run as PAI's rows, on the
 * same servers, so a ratio between them means something on a noisy machine. The commits of 10 and
 * 100 clients are measured last (`measureCommitCeiling`), beside the throughput table that reads
 * them: they leave a server, and the disk it shares with the others, busy for seconds after.
 */

import { setTimeout as sleep } from "node:timers/promises";
import { type Kysely, sql } from "kysely";
import { formatMs, type Measurement, measure, summarize } from "./harness.ts";

export type SqlFloor = {
  engine: string;
  select1: Measurement;
  insert1k: Measurement;
  /**
   * The same insert after the process and the server sat idle for 1 ms: what a statement costs
   * when it is the first after a wait (an HTTP request, a client's think time) rather than one
   * of a back-to-back series. On this class of virtual machine waking an idle core is not free.
   */
  insert1kAfterIdle: Measurement;
  /** Durable 1 KB commits per second by concurrent clients (server engines only). */
  ceiling: Array<{ clients: number; connections: number; commitsPerSecond: number }>;
};

const body = "x".repeat(1024);

/**
 * A fresh table for durable 1 KB inserts, named `pai_bench_<kind>_<random>` so concurrent or
 * crashed runs never share one; `drop` removes it.
 */
export async function openFloorTable(db: Kysely<any>, kind: string) {
  const table = `pai_bench_${kind}_${globalThis.crypto.randomUUID().slice(0, 8)}`;
  await db.schema
    .createTable(table)
    .ifNotExists()
    .addColumn("id", "varchar(64)", (column) => column.primaryKey())
    .addColumn("body", "text", (column) => column.notNull())
    .execute();
  return { table, drop: () => db.schema.dropTable(table).ifExists().execute() };
}

export const insertOne = (db: Kysely<any>, table: string) =>
  db.insertInto(table).values({ id: globalThis.crypto.randomUUID(), body }).execute();

/** Each of `clients` loops on durable inserts for `seconds`; commits per second overall. */
async function commitsPerSecond(db: Kysely<any>, table: string, clients: number, seconds = 2) {
  let commits = 0;
  const started = performance.now();
  const deadline = started + seconds * 1000;
  await Promise.all(
    Array.from({ length: clients }, async () => {
      while (performance.now() < deadline) {
        await insertOne(db, table);
        commits++;
      }
    }),
  );
  return commits / ((performance.now() - started) / 1000);
}

/**
 * A round trip, a durable 1 KB insert and the commits per second of one client, on `db` (the
 * engine's own Kysely instance).
 */
export async function measureSqlFloor(engine: string, db: Kysely<any>): Promise<SqlFloor> {
  const { table, drop } = await openFloorTable(db, "floor");
  const [select1, insert1k] = await measure(
    [
      { name: `${engine}: select 1`, fn: () => sql`select 1`.execute(db) },
      { name: `${engine}: durable 1 KB insert`, fn: () => insertOne(db, table) },
    ],
    { warmupTime: 1000 },
  );
  const insert1kAfterIdle = await insertsAfterIdle(engine, db, table);
  const ceiling = [{ clients: 1, connections: 1, commitsPerSecond: await commitsPerSecond(db, table, 1) }];
  await drop();
  return { engine, select1: select1!, insert1k: insert1k!, insert1kAfterIdle, ceiling };
}

/** Durable inserts each timed alone after 1 ms in which neither the process nor the server worked. */
async function insertsAfterIdle(engine: string, db: Kysely<any>, table: string, iterations = 400) {
  const times: number[] = [];
  for (let index = 0; index < iterations; index++) {
    await sleep(1);
    const started = performance.now();
    await insertOne(db, table);
    times.push(performance.now() - started);
  }
  return summarize(`${engine}: durable 1 KB insert after 1 ms idle`, times);
}

/**
 * A server's durable commits per second from 1, 10 and 100 concurrent clients, added to its
 * floor. `openPool` opens a pool with that many connections: one per client, up to
 * `maxConnections` (what the server allows beside PAI's own pools). Taken after the latency
 * tables: run before them, MariaDB's 100 clients left the machine slow for the Postgres rows that
 * followed (the step commit read 1.55-1.64x the insert after them, 1.32-1.41x without them).
 */
export async function measureCommitCeiling(
  floor: SqlFloor,
  db: Kysely<any>,
  server: { openPool: (connections: number) => Kysely<any>; maxConnections: number },
): Promise<void> {
  const { table, drop } = await openFloorTable(db, "ceiling");
  const ceiling: SqlFloor["ceiling"] = [];
  for (const clients of [1, 10, 100]) {
    const connections = Math.min(clients, server.maxConnections);
    const pooled = server.openPool(connections);
    await commitsPerSecond(pooled, table, clients, 0.5);
    ceiling.push({ clients, connections, commitsPerSecond: await commitsPerSecond(pooled, table, clients) });
    await pooled.destroy();
  }
  await drop();
  floor.ceiling = ceiling;
}

export function logFloor(floors: SqlFloor[], log: (line?: string) => void) {
  log();
  log("### Floor: the database alone (same servers, same run)");
  log(
    "| engine   | select 1 ms | durable 1 KB insert ms | p95 ms | the insert after 1 ms idle ms | commits/s, 1 client |",
  );
  log(
    "|----------|------------:|-----------------------:|-------:|------------------------------:|--------------------:|",
  );
  for (const floor of floors) {
    const one = floor.ceiling.find((entry) => entry.clients === 1)?.commitsPerSecond;
    log(
      `| ${floor.engine.padEnd(8)} | ${formatMs(floor.select1.medianMs).padStart(11)} | ${formatMs(floor.insert1k.medianMs).padStart(22)} | ${formatMs(floor.insert1k.p95Ms).padStart(6)} | ${formatMs(floor.insert1kAfterIdle.medianMs).padStart(29)} | ${(one?.toFixed(0) ?? "-").padStart(19)} |`,
    );
  }
}

/** The server engines' commits per second by concurrent clients (after `measureCommitCeiling`). */
export function logCommitCeiling(floors: SqlFloor[], log: (line?: string) => void) {
  log();
  log("### Commit ceiling: durable 1 KB commits per second by concurrent clients (same servers, same run)");
  log("| engine   | 1 client | 10 clients | 100 clients |");
  log("|----------|---------:|-----------:|------------:|");
  for (const floor of floors) {
    if (!floor.ceiling.some((entry) => entry.clients > 1)) continue;
    const at = (clients: number) => {
      const entry = floor.ceiling.find((candidate) => candidate.clients === clients);
      if (!entry) return "-";
      const pool = entry.connections < clients ? ` (${entry.connections} conns)` : "";
      return `${entry.commitsPerSecond.toFixed(0)}${pool}`;
    };
    log(
      `| ${floor.engine.padEnd(8)} | ${at(1).padStart(8)} | ${at(10).padStart(10)} | ${at(100).padStart(11)} |`,
    );
  }
}
