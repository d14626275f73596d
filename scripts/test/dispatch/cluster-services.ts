/**
 * The services a dispatch cluster run needs (Postgres, and Redis for BullMQ): whether they
 * answer, whether child processes can run, and setting up and tearing down what a run creates.
 */
import { existsSync } from "node:fs";
import { connect } from "node:net";
import { join } from "node:path";
import { type Kysely, sql } from "kysely";
import pg from "pg";
import { repoRoot } from "./cluster-process.ts";
import type { Engine } from "./fixtures/cluster-runtime.ts";

export const postgresUrl = process.env.PAI_TEST_POSTGRES_URL ?? "postgres://postgres@127.0.0.1:5432/test";
export const redisUrl = process.env.PAI_TEST_REDIS_URL ?? "redis://127.0.0.1:6379";

/** Why the services an engine needs are unreachable, or null when they answer. */
export async function unreachable(engine: Engine): Promise<string | null> {
  const pool = new pg.Pool({ connectionString: postgresUrl, max: 1, connectionTimeoutMillis: 5_000 });
  try {
    await pool.query("select 1");
  } catch (error) {
    return `Postgres at ${postgresUrl} is unreachable (${String(error)}); set PAI_TEST_POSTGRES_URL`;
  } finally {
    await pool.end().catch(() => undefined);
  }
  if (engine === "bullmq") {
    const pong = await redisPing(redisUrl);
    if (pong !== null) return `Redis at ${redisUrl} is unreachable (${pong}); set PAI_TEST_REDIS_URL`;
  }
  return null;
}

/** PING over a bare socket (no client library needed to tell whether Redis is there). */
function redisPing(url: string): Promise<string | null> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve) => {
    const socket = connect({ host: hostname || "127.0.0.1", port: Number(port || 6379) });
    const done = (problem: string | null) => {
      socket.destroy();
      resolve(problem);
    };
    socket.setTimeout(5_000, () => done("timed out"));
    socket.on("error", (error) => done(String(error)));
    socket.on("connect", () => socket.write("PING\r\n"));
    // A server that wants a password answers -NOAUTH: it is there.
    socket.on("data", (data) => done(/^(\+PONG|-NOAUTH)/.test(data.toString()) ? null : data.toString()));
  });
}

/**
 * Child processes run the built packages with Node's type stripping. Fails with what to do when
 * the running Node cannot strip types or a package is not built.
 */
export function assertChildProcessesCanRun(engine: Engine): void {
  const features = process.features as { typescript?: string | false };
  if (!features.typescript) {
    throw new Error(
      `The dispatch cluster test starts child processes on .ts files with Node's type stripping, which ${process.execPath} (Node ${process.versions.node}) lacks. Run it through npm so the repo's Node 22 is used: npx vitest run --typecheck.enabled=false scripts/test/dispatch`,
    );
  }
  const adapter = engine === "pgboss" ? "dispatch-pgboss" : "dispatch-bullmq";
  const required = [
    "core/dist/index.js",
    "adapters/storage-kysely/dist/index.js",
    `adapters/${adapter}/dist/index.js`,
  ];
  const missing = required.filter((path) => !existsSync(join(repoRoot, path)));
  if (missing.length > 0) {
    throw new Error(
      `The dispatch cluster test runs its processes on the built packages, but ${missing.join(", ")} is missing. Build first: npm run build -w @pai/core -w @pai/storage-kysely -w @pai/${adapter}`,
    );
  }
}

export async function installBossSchema(schema: string): Promise<void> {
  const { PgBoss } = await import("pg-boss");
  // Installs the schema once, so the processes that start next do not race to.
  const boss = new PgBoss({ connectionString: postgresUrl, schema, supervise: false, schedule: false });
  boss.on("error", () => undefined);
  await boss.start();
  await boss.stop({ graceful: false });
}

export async function cleanup(
  db: Kysely<any>,
  prefix: string,
  engine: Engine,
  bossSchema: string,
  queue: string,
  bullPrefix: string,
) {
  const tables = await sql<{
    tablename: string;
  }>`select tablename from pg_tables where schemaname = current_schema() and tablename like ${`${prefix}%`}`.execute(
    db,
  );
  for (const { tablename } of tables.rows)
    await sql`drop table if exists ${sql.table(tablename)} cascade`.execute(db);
  if (engine === "pgboss") await sql`drop schema if exists ${sql.id(bossSchema)} cascade`.execute(db);
  if (engine === "bullmq") {
    const { Queue } = await import("bullmq");
    const bull = new Queue(queue, { connection: { url: redisUrl }, prefix: bullPrefix });
    await bull.obliterate({ force: true });
    await bull.close();
  }
}
