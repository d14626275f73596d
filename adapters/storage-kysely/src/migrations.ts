// PAI's schema migrations, compiled into the package, and migrateToLatest which applies them.
import { PaiError } from "@pai/core";
import type { Kysely } from "kysely";
import { type Migration, Migrator } from "kysely/migration";
import { type DialectFamily, pickSqlFamily } from "./dialect-family.js";
import type { SqlFamily } from "./families/sql-family.js";
import { type TableNames, tableNames } from "./table-names.js";

export type MigrateOptions = {
  /** Prefix of every PAI table (default `pai_`); use the same one for `kyselyStorage`. */
  tablePrefix?: string;
  /** Overrides dialect detection for third-party Kysely dialects. */
  dialect?: DialectFamily;
};

function createIndex(db: Kysely<any>, family: SqlFamily, prefix: string, name: string) {
  const builder = db.schema.createIndex(`${prefix}${name}`);
  return family.createIndexIfNotExists ? builder.ifNotExists() : builder;
}

// Ids and timestamps compare byte-wise on every engine (each family's column types say how) so
// ordering and keyset cursors match JavaScript string order.
function initialMigration(family: SqlFamily, t: TableNames, prefix: string): Migration {
  const type = family.columnTypes;
  const index = (db: Kysely<any>, name: string) => createIndex(db, family, prefix, name);
  return {
    async up(db) {
      await db.schema
        .createTable(t.threads)
        .ifNotExists()
        .addColumn("thread_id", type.id, (c) => c.primaryKey().notNull())
        .addColumn("scope_key", type.id, (c) => c.notNull())
        .addColumn("user_key", type.id)
        .addColumn("agent_id", type.id, (c) => c.notNull())
        .addColumn("title", type.text)
        .addColumn("status", type.short, (c) => c.notNull())
        .addColumn("version", type.int, (c) => c.notNull())
        .addColumn("active_run_id", type.id)
        .addColumn("metadata", type.json)
        .addColumn("created_at", type.stamp, (c) => c.notNull())
        .addColumn("updated_at", type.stamp, (c) => c.notNull())
        .execute();
      await index(db, "threads_scope_updated_idx")
        .on(t.threads)
        .columns(["scope_key", "updated_at"])
        .execute();

      await db.schema
        .createTable(t.messages)
        .ifNotExists()
        .addColumn("thread_id", type.id, (c) => c.notNull())
        .addColumn("message_id", type.id, (c) => c.notNull())
        .addColumn("position", type.int, (c) => c.notNull())
        .addColumn("role", type.short, (c) => c.notNull())
        .addColumn("message", type.json, (c) => c.notNull())
        .addColumn("run_id", type.id)
        .addColumn("created_at", type.stamp, (c) => c.notNull())
        .addColumn("updated_at", type.stamp, (c) => c.notNull())
        .addPrimaryKeyConstraint(`${t.messages}_pk`, ["thread_id", "message_id"])
        .execute();
      await index(db, "messages_position_idx").on(t.messages).columns(["thread_id", "position"]).execute();

      // A lease can be taken before the run's first upsert, so everything but the key is nullable.
      await db.schema
        .createTable(t.runs)
        .ifNotExists()
        .addColumn("thread_id", type.id, (c) => c.notNull())
        .addColumn("run_id", type.id, (c) => c.notNull())
        .addColumn("status", type.short)
        .addColumn("row", type.json)
        .addColumn("created_at", type.stamp)
        .addColumn("seq", type.bigint)
        .addColumn("lease_owner", type.id)
        .addColumn("lease_expires_at", type.stamp)
        .addPrimaryKeyConstraint(`${t.runs}_pk`, ["thread_id", "run_id"])
        .execute();
      await index(db, "runs_status_lease_idx").on(t.runs).columns(["status", "lease_expires_at"]).execute();

      await db.schema
        .createTable(t.actions)
        .ifNotExists()
        .addColumn("thread_id", type.id, (c) => c.notNull())
        .addColumn("action_id", type.id, (c) => c.notNull())
        .addColumn("scope_key", type.id, (c) => c.notNull())
        .addColumn("state", type.short, (c) => c.notNull())
        .addColumn("created_at", type.stamp, (c) => c.notNull())
        .addColumn("episode", type.int, (c) => c.notNull())
        .addColumn("seq", type.bigint, (c) => c.notNull())
        .addColumn("row", type.json, (c) => c.notNull())
        .addPrimaryKeyConstraint(`${t.actions}_pk`, ["thread_id", "action_id"])
        .execute();
      await index(db, "actions_scope_state_created_idx")
        .on(t.actions)
        .columns(["scope_key", "state", "created_at"])
        .execute();
      await index(db, "actions_scope_created_idx")
        .on(t.actions)
        .columns(["scope_key", "created_at"])
        .execute();

      await db.schema
        .createTable(t.toolData)
        .ifNotExists()
        .addColumn("thread_id", type.id, (c) => c.notNull())
        .addColumn("tool_call_id", type.id, (c) => c.notNull())
        .addColumn("channel", type.id, (c) => c.notNull())
        .addColumn("item_id", type.id, (c) => c.notNull())
        .addColumn("value", type.json)
        .addColumn("updated_at", type.stamp, (c) => c.notNull())
        .addColumn("seq", type.bigint, (c) => c.notNull())
        .addPrimaryKeyConstraint(`${t.toolData}_pk`, ["thread_id", "tool_call_id", "channel", "item_id"])
        .execute();

      await db.schema
        .createTable(t.threadEvents)
        .ifNotExists()
        .addColumn("thread_id", type.id, (c) => c.notNull())
        .addColumn("version", type.int, (c) => c.notNull())
        .addColumn("events", type.json, (c) => c.notNull())
        .addColumn("created_at", type.stamp, (c) => c.notNull())
        .addPrimaryKeyConstraint(`${t.threadEvents}_pk`, ["thread_id", "version"])
        .execute();

      await db.schema
        .createTable(t.files)
        .ifNotExists()
        .addColumn("file_id", type.id, (c) => c.primaryKey().notNull())
        .addColumn("scope_key", type.id, (c) => c.notNull())
        .addColumn("user_key", type.id)
        .addColumn("thread_id", type.id)
        .addColumn("filename", type.text, (c) => c.notNull())
        .addColumn("media_type", type.text, (c) => c.notNull())
        .addColumn("size", type.bigint, (c) => c.notNull())
        .addColumn("metadata", type.json)
        .addColumn("created_at", type.stamp, (c) => c.notNull())
        .execute();
      await index(db, "files_scope_idx").on(t.files).columns(["scope_key", "created_at"]).execute();
    },
  };
}

/**
 * What a thread wakes up for: `wake_at` is the stamp `listDueThreads` scans (a stamp like the
 * others, so it compares byte-wise), `schedules` the thread's scheduled triggers as JSON. Both
 * are nullable, so rows written before this migration read as "nothing due".
 */
function wakeAtMigration(family: SqlFamily, t: TableNames, prefix: string): Migration {
  const type = family.columnTypes;
  return {
    async up(db) {
      // One column per statement: SQLite's ALTER TABLE adds only one.
      await db.schema.alterTable(t.threads).addColumn("wake_at", type.stamp).execute();
      await db.schema.alterTable(t.threads).addColumn("schedules", type.json).execute();
      // Most threads have nothing due; where the engine can, the index leaves them out.
      let index = createIndex(db, family, prefix, "threads_wake_at_idx")
        .on(t.threads)
        .columns(["wake_at", "thread_id"]);
      if (family.partialIndexes) index = index.where("wake_at", "is not", null);
      await index.execute();
    },
  };
}

/**
 * Every migration this package ships, by name. Migrations are code, not files, so bundlers and
 * serverless builds need no extra assets.
 */
function paiMigrations(family: SqlFamily, t: TableNames, prefix: string): Record<string, Migration> {
  return {
    "0001_initial": initialMigration(family, t, prefix),
    "0002_wake_at": wakeAtMigration(family, t, prefix),
  };
}

/** A Kysely `Migrator` over PAI's migrations and migration tables (tests step through it). */
export function paiMigrator(db: Kysely<any>, options: MigrateOptions = {}): Migrator {
  const prefix = options.tablePrefix ?? "pai_";
  const tables = tableNames(prefix);
  const family = pickSqlFamily(db, options.dialect);
  return new Migrator({
    db,
    provider: { getMigrations: async () => paiMigrations(family, tables, prefix) },
    migrationTableName: tables.migrations,
    migrationLockTableName: tables.migrationLock,
  });
}

/** Names of the migrations this package version ships, oldest first. */
export const PAI_MIGRATION_NAMES = ["0001_initial", "0002_wake_at"] as const;

/**
 * Creates or upgrades the PAI tables. Idempotent. Safe to call from several processes at once:
 * Kysely's `Migrator` serializes runs with an advisory lock on Postgres and `GET_LOCK` on MySQL;
 * SQLite and PGlite connections are single-process.
 */
export async function migrateToLatest(db: Kysely<any>, options: MigrateOptions = {}): Promise<void> {
  const migrator = paiMigrator(db, options);
  const { error, results } = await migrator.migrateToLatest();
  if (error) {
    const failed = results?.find((result) => result.status === "Error")?.migrationName;
    throw new PaiError(
      "INTERNAL",
      `PAI migration ${failed ? `"${failed}" ` : ""}failed: ${error instanceof Error ? error.message : String(error)}. Fix the database error and run migrateToLatest again; applied migrations are not re-run.`,
      { cause: error },
    );
  }
}
