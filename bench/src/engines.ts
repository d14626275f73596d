import { PGlite } from "@electric-sql/pglite";
import type { NotifierV1, StorageV1 } from "@pai/core";
import {
  createPgliteDialect,
  kyselyStorage,
  migrateToLatest,
  postgresNotifier,
  tableNames,
} from "@pai/storage-kysely";
import { memoryStorage } from "@pai/storage-memory";
import { Kysely, PostgresDialect } from "kysely";
import pg from "pg";

export type BenchEngine = {
  name: "memory" | "pglite" | "postgres";
  storage: StorageV1;
  /** SQL statements sent through Kysely so far (SQL engines only). */
  statements?: { count: number };
  notifier?: NotifierV1;
  dispose(): Promise<void>;
};

export const postgresUrl = process.env.PAI_TEST_POSTGRES_URL ?? "postgres://postgres@127.0.0.1:5432/test";

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

export async function openPglite(): Promise<BenchEngine> {
  const { statements, log } = statementLog();
  const db = new Kysely<any>({ dialect: createPgliteDialect(new PGlite()), log });
  await migrateToLatest(db);
  return { name: "pglite", storage: kyselyStorage({ db }), statements, dispose: () => db.destroy() };
}

/** Postgres with a bench-only table prefix that is dropped afterwards. */
export async function openPostgres(): Promise<BenchEngine> {
  const prefix = `pai_bench_${globalThis.crypto.randomUUID().slice(0, 8)}_`;
  const pool = new pg.Pool({ connectionString: postgresUrl, max: 20 });
  const { statements, log } = statementLog();
  const db = new Kysely<any>({ dialect: new PostgresDialect({ pool }), log });
  await migrateToLatest(db, { tablePrefix: prefix });
  const notifier = postgresNotifier({ connectionString: postgresUrl });
  return {
    name: "postgres",
    storage: kyselyStorage({ db, tablePrefix: prefix, notifier }),
    notifier,
    statements,
    async dispose() {
      await notifier.close?.();
      for (const table of Object.values(tableNames(prefix)))
        await db.schema.dropTable(table).ifExists().execute();
      await db.destroy();
    },
  };
}
