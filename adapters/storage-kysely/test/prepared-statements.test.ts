// Postgres commits and thread reads go as named (prepared) statements through `pg`, and fall
// back to plain text for a driver that does not take them.
import { makeMessageRow, makeThreadRow } from "@pai/core/testing";
import { Kysely, type LogEvent, PostgresDialect, sql } from "kysely";
import pg from "pg";
import { afterAll, describe, expect, it } from "vitest";
import { kyselyStorage, migrateToLatest, tableNames } from "../src/index.js";
import { openEngine, uniquePrefix } from "./support/engines.js";

const now = "2026-01-01T00:00:00.000Z";

const probe = await openEngine("postgres", "prepared_probe");
const url = process.env.PAI_TEST_POSTGRES_URL ?? "postgres://postgres@127.0.0.1:5432/test";

/** A storage on a pool of ONE connection, so the test can ask that backend what it prepared. */
async function oneConnection(
  options: { preparedStatements?: boolean; pool?: pg.Pool; log?: LogEvent[] } = {},
) {
  const pool = options.pool ?? new pg.Pool({ connectionString: url, max: 1 });
  const log = options.log;
  const db = new Kysely<any>({
    dialect: new PostgresDialect({ pool }),
    ...(log ? { log: (event: LogEvent) => void log.push(event) } : {}),
  });
  const prefix = uniquePrefix("prepared");
  await migrateToLatest(db, { tablePrefix: prefix });
  const storage = kyselyStorage({
    db,
    tablePrefix: prefix,
    ...(options.preparedStatements === undefined ? {} : { preparedStatements: options.preparedStatements }),
  });
  return {
    db,
    storage,
    async prepared(): Promise<string[]> {
      const { rows } = await sql<{ name: string }>`select name from pg_prepared_statements`.execute(db);
      return rows.map((row) => row.name).filter((name) => name.startsWith("pai_"));
    },
    async preparedTexts(): Promise<string[]> {
      const { rows } = await sql<{ name: string; statement: string }>`
        select name, statement from pg_prepared_statements`.execute(db);
      return rows.filter((row) => row.name.startsWith("pai_")).map((row) => row.statement);
    },
    events: tableNames(prefix).threadEvents,
    async dispose() {
      for (const table of Object.values(tableNames(prefix)))
        await db.schema.dropTable(table).ifExists().execute();
      await db.destroy();
    },
  };
}

/** Two commits and a read of one thread: the statements every run sends. */
async function useThread(storage: ReturnType<typeof kyselyStorage>) {
  const threadId = `t-${globalThis.crypto.randomUUID()}`;
  const thread = makeThreadRow({ threadId, scopeKey: "s" });
  expect(
    await storage.commit({ threadId, expectedVersion: 0, now, events: [{ type: "thread-updated", thread }] }),
  ).toEqual({ ok: true, version: 1 });
  const message = makeMessageRow({ threadId, messageId: "m1", position: 1, text: "hello" });
  const addMessage = () =>
    storage.commit({ threadId, expectedVersion: 1, now, events: [{ type: "message-upserted", message }] });
  expect(await addMessage()).toEqual({ ok: true, version: 2 });
  // The same commit again is stale, and still refused through the prepared statement.
  expect(await addMessage()).toMatchObject({ ok: false, reason: "conflict", currentVersion: 2 });
  const snapshot = await storage.loadThread({ threadId });
  expect(snapshot?.thread.version).toBe(2);
  expect(snapshot?.messages.map((row) => row.messageId)).toEqual(["m1"]);
  expect(await storage.loadThread({ threadId: "missing" })).toBeNull();
  // The event-log read a runtime refreshes kept threads with, with and without a limit.
  expect((await storage.readEvents({ threadId, afterVersion: 1 })).map((row) => row.version)).toEqual([2]);
  expect(
    (await storage.readEvents({ threadId, afterVersion: 0, limit: 1 })).map((row) => row.version),
  ).toEqual([1]);
  expect(await storage.readEvents({ threadId, afterVersion: 2 })).toEqual([]);
}

describe("prepared statements on Postgres", () => {
  if ("skip" in probe) {
    it.skip(`skipped: ${probe.skip}`, () => {});
    return;
  }
  afterAll(() => probe.dispose());

  it("sends commits and thread reads as named statements, by default", async () => {
    const log: LogEvent[] = [];
    const engine = await oneConnection({ log });
    try {
      await useThread(engine.storage);
      await useThread(engine.storage);
      // The commit shapes (insert, update), the thread read and the event-log reads, each
      // prepared once on the connection.
      expect((await engine.prepared()).length).toBeGreaterThanOrEqual(5);
      const eventReads = (await engine.preparedTexts()).filter(
        (text) => text.includes(`from "${engine.events}"`) && !/^\s*with/.test(text),
      );
      expect(eventReads).toHaveLength(2);
      // Query loggers still get the statement text.
      const commits = log.filter((event) => /^\s*with t as/.test(String(event.query.sql)));
      expect(commits.length).toBeGreaterThan(0);
      expect(String(commits[0]!.query.sql)).toContain("insert into");
      expect(JSON.parse(JSON.stringify({ sql: commits[0]!.query.sql })).sql).toBe(
        String(commits[0]!.query.sql),
      );
    } finally {
      await engine.dispose();
    }
  });

  it("sends plain text when preparedStatements is false", async () => {
    const engine = await oneConnection({ preparedStatements: false });
    try {
      await useThread(engine.storage);
      expect(await engine.prepared()).toEqual([]);
    } finally {
      await engine.dispose();
    }
  });

  it("falls back to plain text for a driver that only takes strings", async () => {
    const pool = new pg.Pool({ connectionString: url, max: 1 });
    const refused: unknown[] = [];
    // A pg-like driver that rejects anything but a string statement.
    const strict = new Proxy(pool, {
      get(target, key) {
        if (key !== "connect") return Reflect.get(target, key, target);
        return async () => {
          const client = await target.connect();
          const query = client.query.bind(client) as (text: unknown, values?: unknown) => Promise<unknown>;
          return new Proxy(client, {
            get(inner, innerKey) {
              if (innerKey !== "query") return Reflect.get(inner, innerKey, inner);
              return (text: unknown, values?: unknown) => {
                if (typeof text !== "string") {
                  refused.push(text);
                  return Promise.reject(new TypeError("this driver takes string statements only"));
                }
                return query(text, values);
              };
            },
          });
        };
      },
    }) as pg.Pool;
    const engine = await oneConnection({ pool: strict });
    try {
      await useThread(engine.storage);
      await useThread(engine.storage);
      expect(await engine.prepared()).toEqual([]);
      // Probed at most three times, then never again.
      expect(refused.length).toBeGreaterThan(0);
      expect(refused.length).toBeLessThanOrEqual(3);
    } finally {
      await engine.dispose();
    }
  });

  it("refuses a preparedStatements that is not a boolean", () => {
    expect(() => kyselyStorage({ db: probe.db, preparedStatements: "yes" as never })).toThrow(
      /preparedStatements must be true or false/,
    );
  });
});
