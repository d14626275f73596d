// Group commit on a real Postgres server: commits that waited for a statement slot go out in one
// statement, each keeps its own version guard, and what lands is what separate statements write.
import type { StorageCommit, StorageCommitResult, StorageV1, ThreadEvent } from "@pai/core";
import { makeActionRow, makeMessageRow, makeRunRow, makeThreadRow, makeToolDataRow } from "@pai/core/testing";
import { Kysely, PostgresDialect, sql } from "kysely";
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

/** A commit at version 1 that writes one message, or nothing without `text`. */
const edit = (threadId: string, text?: string, expectedVersion = 1): StorageCommit => ({
  threadId,
  expectedVersion,
  now,
  events: text === undefined ? [] : [message(threadId, "x", text)],
});

/**
 * Sends `commits` while a commit of `blocker` holds the only statement slot, so they wait and
 * go out together when it returns; settles each.
 */
async function behind(blocker: string, commits: StorageCommit[]) {
  const held = grouped.commit(edit(blocker));
  const results = await Promise.allSettled(commits.map((commit) => grouped.commit(commit)));
  await held;
  return results;
}

const value = <T>(result: PromiseSettledResult<T> | undefined): T => {
  if (result?.status !== "fulfilled") throw new Error(`expected a result, got ${String(result?.status)}`);
  return result.value;
};

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
    const [stale, b, c] = await behind("g-blocker", [
      edit("g-stale", "lost", 5),
      edit("g-b", "kept"),
      edit("g-c", "kept"),
    ]);
    expect(sent.group - before.group).toBe(1);
    expect(value(stale)).toEqual({ ok: false, reason: "conflict", currentVersion: 1 });
    expect(value(b)).toEqual({ ok: true, version: 2 });
    expect(value(c)).toEqual({ ok: true, version: 2 });
    const staleThread = (await grouped.loadThread({ threadId: "g-stale" }))!;
    expect(staleThread.thread.version).toBe(1);
    expect(staleThread.messages).toEqual([]);
    expect(await grouped.readEvents({ threadId: "g-stale", afterVersion: 1 })).toEqual([]);
    const kept = (await grouped.loadThread({ threadId: "g-b" }))!;
    expect(kept.messages.map((row) => row.messageId)).toEqual(["x"]);
  });

  it("never puts two commits of one thread in a statement: of two racing writers exactly one wins", async () => {
    await created("r-blocker", "r-race", "r-other");
    const [first, second, other] = await behind("r-blocker", [
      edit("r-race", "first"),
      edit("r-race", "second"),
      edit("r-other"),
    ]);
    expect(value(first)).toEqual({ ok: true, version: 2 });
    expect(value(second)).toEqual({ ok: false, reason: "conflict", currentVersion: 2 });
    expect(value(other)).toEqual({ ok: true, version: 2 });
    const race = (await grouped.loadThread({ threadId: "r-race" }))!;
    expect(race.messages.map((row) => row.message.parts)).toEqual([[{ type: "text", text: "first" }]]);
  });

  it("fails only the commit the server refuses; the rest of its group is sent again and commits", async () => {
    await created("e-blocker", "e-bad", "e-b");
    // Postgres' jsonb refuses the NUL character: the whole group statement fails with it.
    const [bad, b] = await behind("e-blocker", [edit("e-bad", "nul \u0000"), edit("e-b", "fine")]);
    expect(bad?.status).toBe("rejected");
    expect((bad as PromiseRejectedResult).reason).toMatchObject({ code: "INTERNAL" });
    expect(value(b)).toEqual({ ok: true, version: 2 });
    const refused = (await grouped.loadThread({ threadId: "e-bad" }))!;
    expect(refused.thread.version).toBe(1);
    expect(refused.messages).toEqual([]);
  });

  it("plans each group statement afresh, so a plan made while the tables were small is never kept", async () => {
    // One connection, so the server's list of statements it keeps prepared is this storage's.
    const single = new Kysely<any>({
      dialect: new PostgresDialect({
        pool: new pg.Pool({
          connectionString: process.env.PAI_TEST_POSTGRES_URL ?? "postgres://postgres@127.0.0.1:5432/test",
          max: 1,
        }),
      }),
    });
    try {
      const { prefix } = engine as TestEngine;
      const storage = kyselyStorage({ db: single, tablePrefix: prefix, groupCommits: { inFlight: 1 } });
      const threads = Array.from({ length: 4 }, (_, index) => `p-${index}`);
      await created("p-blocker", ...threads);
      // More rounds than Postgres takes before it settles on a prepared statement's generic plan.
      for (let round = 0; round < 7; round++) {
        const held = storage.commit({ threadId: "p-blocker", expectedVersion: round + 1, now, events: [] });
        const results = await Promise.all(
          threads.map((threadId) => storage.commit(edit(threadId, `round ${round}`, round + 1))),
        );
        expect(results).toEqual(threads.map(() => ({ ok: true, version: round + 2 })));
        expect(await held).toEqual({ ok: true, version: round + 2 });
      }
      const { rows } = await sql<{ statement: string }>`select statement from pg_prepared_statements`.execute(
        single,
      );
      const ours = rows.filter((row) => row.statement.includes(`${prefix}thread_events`));
      // The single commits are prepared; the group statement, which joins on the threads table, is not.
      expect(ours.some((row) => /^\s*with t as/.test(row.statement))).toBe(true);
      expect(ours.filter((row) => row.statement.includes("union all"))).toEqual([]);
    } finally {
      await single.destroy();
    }
  });

  it("lets two instances group the same threads in opposite orders: every commit lands once or conflicts", async () => {
    // A second storage on the same tables stands for another server. Its groups lock the same
    // threads in the opposite order, so the two may deadlock; Postgres would then abort one
    // statement, and its commits go again alone. Either way nothing but a conflict may surface.
    const other = kyselyStorage({
      db: (engine as TestEngine).db,
      tablePrefix: (engine as TestEngine).prefix,
      groupCommits: { inFlight: 1 },
    });
    const threads = Array.from({ length: 6 }, (_, index) => `x-${index}`);
    await created("x-blocker-a", "x-blocker-b", ...threads);
    let version = 1;
    for (let round = 0; round < 8; round++) {
      const send = (storage: StorageV1, blocker: string, order: string[], text: string) => {
        const held = storage.commit({ threadId: blocker, expectedVersion: round + 1, now, events: [] });
        return [
          held,
          ...order.map((threadId) => storage.commit(edit(threadId, `${text} ${round}`, version))),
        ];
      };
      const results = await Promise.all([
        ...send(grouped, "x-blocker-a", threads, "a"),
        ...send(other, "x-blocker-b", [...threads].reverse(), "b"),
      ]);
      expect(results.filter((result) => !result.ok).every((result) => result.reason === "conflict")).toBe(
        true,
      );
      for (const threadId of threads) {
        const thread = (await grouped.loadThread({ threadId }))!;
        // Exactly one of the two writers of this round moved the thread on.
        expect(thread.thread.version).toBe(version + 1);
      }
      version++;
    }
    for (const threadId of threads) {
      const batches = await grouped.readEvents({ threadId, afterVersion: 0 });
      expect(batches.map((batch) => batch.version)).toEqual(
        Array.from({ length: 9 }, (_, index) => index + 1),
      );
    }
  });
});
