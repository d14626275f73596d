import { createPgliteDialect, migrateToLatest } from "@pai/storage-kysely";
import { Kysely, PostgresDialect } from "kysely";
import pg from "pg";

export type Database = { db: Kysely<any>; label: string; close(): Promise<void> };

async function open(db: Kysely<any>, label: string): Promise<Database> {
  // Creates or updates PAI's tables (prefixed `pai_`); safe to run on every start.
  await migrateToLatest(db);
  return { db, label, close: () => db.destroy() };
}

/** Postgres at DATABASE_URL, through `pg`. */
export async function openDatabase(env: NodeJS.ProcessEnv = process.env): Promise<Database> {
  const url = env.DATABASE_URL?.trim();
  if (!url) {
    throw new Error(
      "Set DATABASE_URL to your Postgres database, e.g. postgres://postgres:postgres@localhost:5432/app (see README.md).",
    );
  }
  const pool = new pg.Pool({ connectionString: url, max: 10 });
  return open(
    new Kysely<any>({ dialect: new PostgresDialect({ pool }) }),
    `Postgres at ${new URL(url).host}`,
  );
}

/** Tests run on PGlite (Postgres compiled to WebAssembly) in memory: no server needed. */
export async function openTestDatabase(): Promise<Database> {
  const { PGlite } = await import("@electric-sql/pglite");
  return open(new Kysely<any>({ dialect: createPgliteDialect(new PGlite()) }), "PGlite in memory");
}
