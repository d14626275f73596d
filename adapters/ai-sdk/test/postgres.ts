import type { StorageV1 } from "@pai/core";
import { kyselyStorage, migrateToLatest, postgresNotifier } from "@pai/storage-kysely";
import { Kysely, PostgresDialect, sql } from "kysely";
import pg from "pg";

export type TestStorage = {
  /** Storage for one server instance: on Postgres each gets its own notifier, as separate processes would. */
  instance(): StorageV1;
  dispose(): Promise<void>;
};

/**
 * Postgres storage on a random table prefix and notify channel, or null where no server is
 * reachable outside CI (under CI=true a missing server fails the suite). `publishDelayMs` goes to
 * each instance's notifier: with a window, one NOTIFY carries commits and live deltas together.
 */
export async function openPostgresStorage(
  label: string,
  options: { publishDelayMs?: number } = {},
): Promise<TestStorage | null> {
  const url = process.env.PAI_TEST_POSTGRES_URL ?? "postgres://postgres@127.0.0.1:5432/test";
  const pool = new pg.Pool({ connectionString: url, max: 8 });
  try {
    await pool.query("select 1");
  } catch (error) {
    await pool.end();
    if (process.env.CI === "true")
      throw new Error(`Postgres is required under CI=true (${url}): ${String(error)}`);
    return null;
  }
  const suffix = Math.random().toString(36).slice(2, 8);
  const prefix = `pai_${label}_${suffix}_`;
  const db = new Kysely<any>({ dialect: new PostgresDialect({ pool }) });
  await migrateToLatest(db, { tablePrefix: prefix });
  const notifiers: Array<{ close?: () => Promise<void> }> = [];
  return {
    instance: () => {
      const notifier = postgresNotifier({
        connectionString: url,
        channel: `pai_${label}_${suffix}`,
        ...(options.publishDelayMs === undefined ? {} : { publishDelayMs: options.publishDelayMs }),
      });
      notifiers.push(notifier as { close?: () => Promise<void> });
      return kyselyStorage({ db, tablePrefix: prefix, notifier });
    },
    dispose: async () => {
      for (const notifier of notifiers) await notifier.close?.();
      const tables = await sql<{
        tablename: string;
      }>`select tablename from pg_tables where tablename like ${`${prefix}%`}`.execute(db);
      for (const { tablename } of tables.rows)
        await sql`drop table if exists ${sql.table(tablename)} cascade`.execute(db);
      await db.destroy();
    },
  };
}
