import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { PGlite } from "@electric-sql/pglite";
import type { NotifierV1, StorageV1 } from "@pai/core";
import {
  createNodeSqliteDialect,
  createPgliteDialect,
  kyselyStorage,
  migrateToLatest,
  postgresNotifier,
  tableNames,
} from "@pai/storage-kysely";
import { memoryStorage } from "@pai/storage-memory";
import { Kysely, MysqlDialect, PostgresDialect } from "kysely";
import { createPool } from "mysql2";
import pg from "pg";

export type EngineName = "memory" | "pglite" | "sqlite" | "postgres" | "mariadb";

export type BenchEngine = {
  name: EngineName;
  storage: StorageV1;
  /** The engine's Kysely instance and table prefix (SQL engines only), for the floor rows. */
  sql?: { db: Kysely<any>; prefix: string };
  /** SQL statements sent through Kysely so far (SQL engines only). */
  statements?: { count: number };
  notifier?: NotifierV1;
  dispose(): Promise<void>;
};

export const postgresUrl = process.env.PAI_TEST_POSTGRES_URL ?? "postgres://postgres@127.0.0.1:5432/test";
export const mariadbUrl = process.env.PAI_TEST_MYSQL_URL ?? "mysql://root@127.0.0.1:3306/test";

export async function openMemory(): Promise<BenchEngine> {
  return { name: "memory", storage: memoryStorage(), dispose: async () => undefined };
}

/** Counts every statement Kysely executes (its query log sees each one). */
function statementLog() {
  const statements = { count: 0 };
  return {
    statements,
    log: (event: { level: string }) => {
      if (event.level === "query") statements.count++;
    },
  };
}

const benchPrefix = () => `pai_bench_${globalThis.crypto.randomUUID().slice(0, 8)}_`;

/** A migrated Kysely storage on `db`; its tables are dropped on dispose. */
async function openSql(
  name: EngineName,
  db: Kysely<any>,
  statements: { count: number },
  options: { notifier?: NotifierV1; cleanup?: () => void } = {},
): Promise<BenchEngine> {
  const prefix = benchPrefix();
  await migrateToLatest(db, { tablePrefix: prefix });
  const { notifier } = options;
  return {
    name,
    storage: kyselyStorage({ db, tablePrefix: prefix, ...(notifier ? { notifier } : {}) }),
    sql: { db, prefix },
    statements,
    ...(notifier ? { notifier } : {}),
    async dispose() {
      await notifier?.close?.();
      for (const table of Object.values(tableNames(prefix)))
        await db.schema.dropTable(table).ifExists().execute();
      await db.destroy();
      options.cleanup?.();
    },
  };
}

export async function openPglite(): Promise<BenchEngine> {
  const { statements, log } = statementLog();
  return openSql("pglite", new Kysely<any>({ dialect: createPgliteDialect(new PGlite()), log }), statements);
}

/** SQLite on a file (a durable commit is the point of the comparison), with the driver's defaults. */
export async function openSqlite(): Promise<BenchEngine> {
  const { statements, log } = statementLog();
  const dir = mkdtempSync(join(tmpdir(), "pai-bench-sqlite-"));
  const db = new Kysely<any>({
    dialect: createNodeSqliteDialect(new DatabaseSync(join(dir, "bench.db"))),
    log,
  });
  return openSql("sqlite", db, statements, { cleanup: () => rmSync(dir, { recursive: true, force: true }) });
}

/** Postgres with a bench-only table prefix that is dropped afterwards. */
export async function openPostgres(): Promise<BenchEngine> {
  const { statements, log } = statementLog();
  // The pool size the docs recommend: on this 2-core machine 20 connections ran fewer runs per
  // second at 100 concurrent runs than 10 did (backends fight over the cores).
  const pool = new pg.Pool({ connectionString: postgresUrl, max: 10 });
  const db = new Kysely<any>({ dialect: new PostgresDialect({ pool }), log });
  const notifier = postgresNotifier({ connectionString: postgresUrl });
  return openSql("postgres", db, statements, { notifier });
}

export async function openMariadb(): Promise<BenchEngine> {
  const { statements, log } = statementLog();
  const db = new Kysely<any>({
    dialect: new MysqlDialect({ pool: createPool({ uri: mariadbUrl, connectionLimit: 20 }) }),
    log,
  });
  return openSql("mariadb", db, statements);
}

/** A Kysely pool of `connections` on a server engine, for the floor's concurrent commits. */
export function openServerPool(name: "postgres" | "mariadb", connections: number): Kysely<any> {
  return name === "postgres"
    ? new Kysely<any>({
        dialect: new PostgresDialect({
          pool: new pg.Pool({ connectionString: postgresUrl, max: connections }),
        }),
      })
    : new Kysely<any>({
        dialect: new MysqlDialect({ pool: createPool({ uri: mariadbUrl, connectionLimit: connections }) }),
      });
}
