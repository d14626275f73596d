import type { ThreadEvent } from "@pai/core";
import { makeActionRow, makeMessageRow, makeRunRow, makeThreadRow, makeToolDataRow } from "@pai/core/testing";
import { type KyselyPlugin, sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { kyselyStorage, migrateToLatest } from "../src/index.js";
import { type EngineName, openEngine } from "./support/engines.js";

const engines: EngineName[] = ["pglite", "sqlite", "postgres", "mysql"];

/** Counts statements built by Kysely's query builders (BEGIN/COMMIT are raw and not counted). */
function statementCounter() {
  const counter = { count: 0, plugin: undefined as unknown as KyselyPlugin };
  counter.plugin = {
    transformQuery: (args) => {
      counter.count++;
      return args.node;
    },
    transformResult: async (args) => args.result,
  };
  return counter;
}

describe.each(engines)("commit cost on %s", async (name) => {
  const engine = await openEngine(name, `cost_${name}`);
  if ("skip" in engine) {
    it.skip(`skipped: ${engine.skip}`, () => {});
    return;
  }
  const counter = statementCounter();
  const storage = kyselyStorage({ db: engine.db.withPlugin(counter.plugin), tablePrefix: engine.prefix });
  beforeAll(() => migrateToLatest(engine.db, { tablePrefix: engine.prefix }));
  afterAll(() => engine.dispose());

  const now = "2026-01-01T00:00:00.000Z";
  const threadId = "cost";
  const message = (index: number) =>
    makeMessageRow({ threadId, messageId: `m${index}`, position: index, text: `text ${index}` });

  // Postgres and PGlite write a whole commit as one statement (data-modifying CTEs); the other
  // engines run one statement per touched table inside a transaction.
  const singleStatement = name === "postgres" || name === "pglite";

  it("writes few statements, batching many rows, and rewrites no untouched row", async () => {
    const thread = makeThreadRow({ threadId, scopeKey: "s" });
    const many: ThreadEvent[] = Array.from({ length: 1200 }, (_, index) => ({
      type: "message-upserted",
      message: message(index + 1),
    }));
    counter.count = 0;
    expect(
      await storage.commit({
        threadId,
        expectedVersion: 0,
        events: [{ type: "thread-updated", thread }, ...many],
        now,
      }),
    ).toEqual({ ok: true, version: 1 });
    // otherwise: insert thread + 3 batches of 500 messages + event log
    expect(counter.count).toBe(singleStatement ? 1 : 5);

    const snapshotRows = async () =>
      name === "postgres" || name === "pglite"
        ? (
            await sql<{
              message_id: string;
              xmin: string;
            }>`select message_id, xmin::text from ${sql.table(`${engine.prefix}messages`)} where thread_id = ${threadId} order by message_id`.execute(
              engine.db,
            )
          ).rows
        : null;
    const before = await snapshotRows();
    const events: ThreadEvent[] = [
      { type: "message-upserted", message: { ...message(7), updatedAt: "2026-01-02T00:00:00.000Z" } },
      { type: "run-upserted", run: makeRunRow({ threadId, runId: "r1" }) },
      { type: "action-upserted", action: makeActionRow({ threadId, actionId: "a1", scopeKey: "s" }) },
      {
        type: "tool-data-upserted",
        item: makeToolDataRow({ threadId, toolCallId: "c", itemId: "i1", value: 1 }),
      },
      {
        type: "tool-data-upserted",
        item: makeToolDataRow({ threadId, toolCallId: "c", itemId: "i2", value: 2 }),
      },
    ];
    counter.count = 0;
    expect(await storage.commit({ threadId, expectedVersion: 1, events, now })).toEqual({
      ok: true,
      version: 2,
    });
    // otherwise: update thread + one upsert per table + event log
    expect(counter.count).toBe(singleStatement ? 1 : 6);
    const after = await snapshotRows();
    if (before && after) {
      const changed = after
        .filter((row, index) => row.xmin !== before[index].xmin)
        .map((row) => row.message_id);
      expect(changed).toEqual(["m7"]);
    }
  });

  it("reads a whole thread in one statement on Postgres", async () => {
    counter.count = 0;
    const snapshot = await storage.loadThread({ threadId });
    expect(snapshot?.messages).toHaveLength(1200);
    expect(snapshot?.toolData.map((item) => item.itemId)).toEqual(["i1", "i2"]);
    expect(counter.count).toBe(singleStatement ? 1 : 5);
  });

  it("a conflicting commit writes nothing and reports the current version", async () => {
    const result = await storage.commit({
      threadId,
      expectedVersion: 1,
      events: [{ type: "message-upserted", message: message(9999) }],
      now,
    });
    expect(result).toEqual({ ok: false, reason: "conflict", currentVersion: 2 });
    const snapshot = await storage.loadThread({ threadId });
    expect(snapshot?.messages.some((row) => row.messageId === "m9999")).toBe(false);
    expect(snapshot?.thread.version).toBe(2);
  });
});
