import { PaiError } from "@pai/core";
import { makeThreadRow } from "@pai/core/testing";
import { sql } from "kysely";
import { afterAll, describe, expect, it } from "vitest";
import { kyselyStorage, migrateToLatest, PAI_MIGRATION_NAMES } from "../src/index.js";
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
});
