import { makeRunRow, makeThreadRow } from "@pai/core/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { kyselyStorage, migrateToLatest } from "../src/index.js";
import { type EngineName, openEngine } from "./support/engines.js";

const engines: EngineName[] = ["pglite", "sqlite", "postgres", "mysql"];

describe.each(engines)("run lease races on %s", async (name) => {
  const engine = await openEngine(name, `lease_${name}`);
  if ("skip" in engine) {
    it.skip(`skipped: ${engine.skip}`, () => {});
    return;
  }
  const storage = kyselyStorage({ db: engine.db, tablePrefix: engine.prefix });
  beforeAll(() => migrateToLatest(engine.db, { tablePrefix: engine.prefix }));
  afterAll(() => engine.dispose());
  const owners = Array.from({ length: 20 }, (_, index) => `owner-${index}`);
  const race = (threadId: string, runId: string) =>
    Promise.all(
      owners.map((owner) =>
        storage.acquireRunLease({
          threadId,
          runId,
          owner,
          now: "2026-01-01T00:00:00.000Z",
          expiresAt: "2026-01-01T00:01:00.000Z",
        }),
      ),
    );

  it("grants a contested lease on an existing run to exactly one owner", async () => {
    const thread = makeThreadRow({ threadId: "t1", scopeKey: "s" });
    const run = makeRunRow({ threadId: "t1", runId: "r1", status: "running" });
    await storage.commit({
      threadId: "t1",
      expectedVersion: 0,
      events: [
        { type: "thread-updated", thread },
        { type: "run-upserted", run },
      ],
      now: thread.updatedAt,
    });
    expect((await race("t1", "r1")).filter(Boolean)).toHaveLength(1);
  });

  it("grants a contested lease on a run without a row yet to exactly one owner", async () => {
    expect((await race("t2", "r2")).filter(Boolean)).toHaveLength(1);
  });
});
