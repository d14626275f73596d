import { mkdirSync } from "node:fs";
import { dirname } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { createNodeSqliteDialect, migrateToLatest } from "@pai/storage-kysely";
import { Kysely } from "kysely";

export type Database = { db: Kysely<any>; label: string; close(): Promise<void> };

async function open(database: DatabaseSync, label: string): Promise<Database> {
  const db = new Kysely<any>({ dialect: createNodeSqliteDialect(database) });
  // Creates or updates PAI's tables (prefixed `pai_`); safe to run on every start.
  await migrateToLatest(db);
  return {
    db,
    label,
    close: async () => {
      await db.destroy();
      database.close();
    },
  };
}

/** SQLite through Node's built-in `node:sqlite`: the file SQLITE_PATH (default data/app.db). */
export async function openDatabase(env: NodeJS.ProcessEnv = process.env): Promise<Database> {
  const path = env.SQLITE_PATH?.trim() || "data/app.db";
  if (path !== ":memory:") mkdirSync(dirname(path), { recursive: true });
  return open(new DatabaseSync(path), `SQLite ${path}`);
}

/** A fresh in-memory database, for tests. */
export async function openTestDatabase(): Promise<Database> {
  return open(new DatabaseSync(":memory:"), "SQLite in memory");
}
