import { PaiError } from "@pai/core";
import { makeThreadRow } from "@pai/core/testing";
import { sql } from "kysely";
import { afterAll, describe, expect, it } from "vitest";
import { kyselyStorage, migrateToLatest, PAI_MIGRATION_NAMES, tableNames } from "../src/index.js";
import { paiMigrator } from "../src/migrations.js";
import { type EngineName, openEngine, type TestEngine } from "./support/engines.js";

const engines: EngineName[] = ["pglite", "sqlite", "postgres", "mysql"];

describe.each(engines)("migrateToLatest on %s", async (name) => {
  // Two independent Kysely instances (two pools) stand in for two processes on the server engines.
  const first = await openEngine(name, `mig_${name}`);
  const second = name === "postgres" || name === "mysql" ? await openEngine(name, `mig_${name}`) : first;
  if ("skip" in first || "skip" in second) {
    it.skip(`skipped: ${"skip" in first ? first.skip : ""}`, () => {});
    return;
  }
  const engines: [TestEngine, TestEngine] = [first, second];
  afterAll(async () => {
    if (second !== first) await second.db.destroy();
    await first.dispose();
  });
  const prefix = first.prefix;

  it("reports MIGRATION_REQUIRED before the tables exist", async () => {
    const storage = kyselyStorage({ db: first.db, tablePrefix: prefix });
    const error = await storage.loadThread({ threadId: "t" }).catch((caught: unknown) => caught);
    expect(PaiError.isInstance(error) && error.code).toBe("MIGRATION_REQUIRED");
  });

  it("runs concurrently from two connections, applying each migration once", async () => {
    await Promise.all(
      engines.flatMap((engine) => [1, 2].map(() => migrateToLatest(engine.db, { tablePrefix: prefix }))),
    );
    const { rows } = await sql<{
      name: string;
    }>`select name from ${sql.table(`${prefix}kysely_migration`)}`.execute(first.db);
    expect(rows.map((row) => row.name)).toEqual([...PAI_MIGRATION_NAMES]);
  });

  it("is idempotent and leaves data in place", async () => {
    const storage = kyselyStorage({ db: first.db, tablePrefix: prefix });
    const thread = makeThreadRow({ threadId: "kept", scopeKey: "s" });
    expect(
      await storage.commit({
        threadId: "kept",
        expectedVersion: 0,
        events: [{ type: "thread-updated", thread }],
        now: thread.updatedAt,
      }),
    ).toEqual({ ok: true, version: 1 });
    await migrateToLatest(second.db, { tablePrefix: prefix });
    expect((await storage.loadThread({ threadId: "kept" }))?.thread.version).toBe(1);
  });

  it("ships the migrations PAI_MIGRATION_NAMES names, in order", async () => {
    const migrations = await paiMigrator(first.db, { tablePrefix: prefix }).getMigrations();
    expect(migrations.map((migration) => migration.name)).toEqual([...PAI_MIGRATION_NAMES]);
  });

  it("upgrades tables made by 0001_initial, keeping their rows, so threads can wake up", async () => {
    const upgraded = `${prefix}up_`;
    const t = tableNames(upgraded);
    try {
      const { error } = await paiMigrator(first.db, { tablePrefix: upgraded }).migrateTo("0001_initial");
      expect(error).toBeUndefined();
      // A row as the storage of 0001_initial wrote it.
      const old = makeThreadRow({ threadId: "old", scopeKey: "s" });
      await first.db
        .insertInto(t.threads)
        .values({
          thread_id: old.threadId,
          scope_key: old.scopeKey,
          user_key: old.userKey,
          agent_id: old.agentId,
          title: old.title,
          status: old.status,
          version: 1,
          active_run_id: old.activeRunId,
          metadata: null,
          created_at: old.createdAt,
          updated_at: old.updatedAt,
        })
        .execute();

      await migrateToLatest(second.db, { tablePrefix: upgraded });
      const { rows } = await sql<{ name: string }>`select name from ${sql.table(t.migrations)}`.execute(
        first.db,
      );
      expect(rows.map((row) => row.name).sort()).toEqual([...PAI_MIGRATION_NAMES]);

      const storage = kyselyStorage({ db: first.db, tablePrefix: upgraded });
      expect((await storage.loadThread({ threadId: "old" }))?.thread).toEqual({ ...old, version: 1 });
      expect(await storage.listDueThreads({ now: "2100-01-01T00:00:00.000Z", limit: 10 })).toEqual([]);

      const wakeAt = "2026-01-02T00:00:00.000Z";
      const result = await storage.commit({
        threadId: "old",
        expectedVersion: 1,
        events: [{ type: "thread-updated", thread: { ...old, wakeAt, schedules: [] } }],
        now: "2026-01-01T00:00:01.000Z",
      });
      expect(result).toEqual({ ok: true, version: 2 });
      expect(await storage.listDueThreads({ now: wakeAt, limit: 10 })).toEqual([{ threadId: "old", wakeAt }]);
      expect((await storage.loadThread({ threadId: "old" }))?.thread).toMatchObject({
        wakeAt,
        schedules: [],
      });
    } finally {
      for (const table of Object.values(t)) await first.db.schema.dropTable(table).ifExists().execute();
    }
  });
});
