// Group commit on a real Postgres server: commits that waited for a statement slot go out in one
// statement, each keeps its own version guard, and what lands is what separate statements write.
import type { StorageCommit, StorageCommitResult, StorageV1, ThreadEvent } from "@pai/core";
import { makeActionRow, makeMessageRow, makeRunRow, makeThreadRow, makeToolDataRow } from "@pai/core/testing";
import { Kysely, PostgresDialect } from "kysely";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { kyselyStorage, migrateToLatest, tableNames } from "../src/index.js";
import { openEngine, type TestEngine, uniquePrefix } from "./support/engines.js";

const engine = await openEngine("postgres", "groups");
const suite = "skip" in engine ? describe.skip : describe;

/** Statements the grouped storage sent, by kind. */
const sent = { single: 0, group: 0 };
let logged: Kysely<any>;
let grouped: StorageV1;
let alone: StorageV1;
const soloPrefix = uniquePrefix("groups_solo");

const now = "2026-02-01T00:00:00.000Z";
const at = (second: number) => `2026-02-01T00:00:${String(second).padStart(2, "0")}.000Z`;

/** A thread's life in three commits: created, a step with every kind of row, then a message edit. */
function lifeOf(threadId: string): Array<Omit<StorageCommit, "expectedVersion">> {
  const thread = makeThreadRow({
    threadId,
    scopeKey: "org:groups",
    userKey: "user-1",
    metadata: { plan: "pro", tags: ["a", "b"] },
    createdAt: at(1),
    updatedAt: at(1),
  });
  const running = { ...thread, status: "running" as const, activeRunId: "run-1", wakeAt: at(30) };
  const step: ThreadEvent[] = [
    { type: "thread-updated", thread: running },
    {
      type: "message-upserted",
      message: makeMessageRow({ threadId, messageId: "m1", position: 1, text: `hello from ${threadId}` }),
    },
    { type: "run-upserted", run: makeRunRow({ threadId, runId: "run-1", createdAt: at(2) }) },
    {
      type: "action-upserted",
      action: makeActionRow({ threadId, actionId: `action-${threadId}`, scopeKey: "org:groups" }),
    },
    {
      type: "tool-data-upserted",
      item: makeToolDataRow({ threadId, toolCallId: "call-1", itemId: "i1", value: { progress: 0.5 } }),
    },
  ];
  return [
    { threadId, now: at(1), events: [{ type: "thread-updated", thread }] },
    { threadId, now: at(2), events: step },
    {
      threadId,
      now: at(3),
      events: [
        {
          type: "message-upserted",
          message: makeMessageRow({
            threadId,
            messageId: "m1",
            position: 1,
            text: "edited",
            updatedAt: at(3),
          }),
        },
      ],
    },
  ];
}

async function live(storage: StorageV1, commits: Array<Omit<StorageCommit, "expectedVersion">>) {
  const results: StorageCommitResult[] = [];
  let version = 0;
  for (const commit of commits) {
    const result = await storage.commit({ ...commit, expectedVersion: version });
    results.push(result);
    if (result.ok) version = result.version;
  }
  return results;
}

const message = (threadId: string, messageId: string, text: string): ThreadEvent => ({
  type: "message-upserted",
  message: makeMessageRow({ threadId, messageId, position: 2, text }),
});

/** Creates threads at version 1 on the grouped storage. */
async function created(...threadIds: string[]) {
  for (const threadId of threadIds) {
    const result = await grouped.commit({
      threadId,
      expectedVersion: 0,
      now,
      events: [{ type: "thread-updated", thread: makeThreadRow({ threadId, scopeKey: "org:groups" }) }],
    });
    expect(result).toEqual({ ok: true, version: 1 });
  }
}

suite("group commit on Postgres", () => {
  beforeAll(async () => {
    const { db, prefix } = engine as TestEngine;
    await migrateToLatest(db, { tablePrefix: prefix });
    await migrateToLatest(db, { tablePrefix: soloPrefix });
    logged = new Kysely({
      dialect: new PostgresDialect({
        pool: new pg.Pool({
          connectionString: process.env.PAI_TEST_POSTGRES_URL ?? "postgres://postgres@127.0.0.1:5432/test",
          max: 4,
        }),
      }),
      log: (event) => {
        const text = String(event.query.sql);
        if (!text.includes(`${prefix}thread_events`) || !text.startsWith("with")) return;
        if (text.includes("union all")) sent.group++;
        else sent.single++;
      },
    });
    // One commit statement in flight: every commit that arrives meanwhile waits and is grouped.
    grouped = kyselyStorage({ db: logged, tablePrefix: prefix, groupCommits: { inFlight: 1 } });
    alone = kyselyStorage({ db, tablePrefix: soloPrefix, groupCommits: false });
  });

  afterAll(async () => {
    if ("skip" in engine) return;
    await logged?.destroy();
    for (const table of Object.values(tableNames(soloPrefix)))
      await engine.db.schema.dropTable(table).ifExists().execute();
    await engine.dispose();
  });

  it("writes concurrent threads in group statements, landing what separate statements land", async () => {
    const threads = Array.from({ length: 12 }, (_, index) => `life-${index}`);
    const before = { ...sent };
    const results = await Promise.all(threads.map((threadId) => live(grouped, lifeOf(threadId))));
    await Promise.all(threads.map((threadId) => live(alone, lifeOf(threadId))));
    for (const perThread of results)
      expect(perThread).toEqual([1, 2, 3].map((version) => ({ ok: true, version })));
    // 36 commits; most of them went out grouped.
    expect(sent.group - before.group).toBeGreaterThan(0);
    expect(sent.single - before.single + (sent.group - before.group)).toBeLessThan(36);
    for (const threadId of threads) {
      expect(await grouped.loadThread({ threadId })).toEqual(await alone.loadThread({ threadId }));
      expect(await grouped.readEvents({ threadId, afterVersion: 0 })).toEqual(
        await alone.readEvents({ threadId, afterVersion: 0 }),
      );
    }
    const thread = (await grouped.loadThread({ threadId: "life-0" }))!;
    expect(thread.thread).toMatchObject({
      version: 3,
      status: "running",
      wakeAt: at(30),
      metadata: { plan: "pro" },
    });
    expect(thread.messages[0]?.message.parts).toEqual([{ type: "text", text: "edited" }]);
  });

  it("keeps each commit's version guard: a stale one writes nothing, the others of its group commit", async () => {
    await created("g-blocker", "g-stale", "g-b", "g-c");
    const before = { ...sent };
    const blocker = grouped.commit({ threadId: "g-blocker", expectedVersion: 1, now, events: [] });
    const [stale, b, c] = await Promise.all([
      grouped.commit({
        threadId: "g-stale",
        expectedVersion: 5,
        now,
        events: [message("g-stale", "x", "lost")],
      }),
      grouped.commit({ threadId: "g-b", expectedVersion: 1, now, events: [message("g-b", "x", "kept")] }),
      grouped.commit({ threadId: "g-c", expectedVersion: 1, now, events: [message("g-c", "x", "kept")] }),
    ]);
    await blocker;
    expect(sent.group - before.group).toBe(1);
    expect(stale).toEqual({ ok: false, reason: "conflict", currentVersion: 1 });
    expect(b).toEqual({ ok: true, version: 2 });
    expect(c).toEqual({ ok: true, version: 2 });
    const staleThread = (await grouped.loadThread({ threadId: "g-stale" }))!;
    expect(staleThread.thread.version).toBe(1);
    expect(staleThread.messages).toEqual([]);
    expect(await grouped.readEvents({ threadId: "g-stale", afterVersion: 1 })).toEqual([]);
    expect((await grouped.loadThread({ threadId: "g-b" }))!.messages.map((row) => row.messageId)).toEqual([
      "x",
    ]);
  });

  it("never puts two commits of one thread in a statement: of two racing writers exactly one wins", async () => {
    await created("r-blocker", "r-race", "r-other");
    const blocker = grouped.commit({ threadId: "r-blocker", expectedVersion: 1, now, events: [] });
    const [first, second, other] = await Promise.all([
      grouped.commit({
        threadId: "r-race",
        expectedVersion: 1,
        now,
        events: [message("r-race", "x", "first")],
      }),
      grouped.commit({
        threadId: "r-race",
        expectedVersion: 1,
        now,
        events: [message("r-race", "x", "second")],
      }),
      grouped.commit({ threadId: "r-other", expectedVersion: 1, now, events: [] }),
    ]);
    await blocker;
    expect(first).toEqual({ ok: true, version: 2 });
    expect(second).toEqual({ ok: false, reason: "conflict", currentVersion: 2 });
    expect(other).toEqual({ ok: true, version: 2 });
    const race = (await grouped.loadThread({ threadId: "r-race" }))!;
    expect(race.messages.map((row) => row.message.parts)).toEqual([[{ type: "text", text: "first" }]]);
  });

  it("fails only the commit the server refuses; the rest of its group is sent again and commits", async () => {
    await created("e-blocker", "e-bad", "e-b");
    const blocker = grouped.commit({ threadId: "e-blocker", expectedVersion: 1, now, events: [] });
    // Postgres' jsonb refuses the NUL character: the whole group statement fails with it.
    const [bad, b] = await Promise.allSettled([
      grouped.commit({
        threadId: "e-bad",
        expectedVersion: 1,
        now,
        events: [message("e-bad", "x", "nul \u0000")],
      }),
      grouped.commit({ threadId: "e-b", expectedVersion: 1, now, events: [message("e-b", "x", "fine")] }),
    ]);
    await blocker;
    expect(bad.status).toBe("rejected");
    expect((bad as PromiseRejectedResult).reason).toMatchObject({ code: "INTERNAL" });
    expect(b).toEqual({ status: "fulfilled", value: { ok: true, version: 2 } });
    const refused = (await grouped.loadThread({ threadId: "e-bad" }))!;
    expect(refused.thread.version).toBe(1);
    expect(refused.messages).toEqual([]);
  });
});
