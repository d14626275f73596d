import { createAgentRuntime, defineAgent, defineTool, type NotifierMessage, type StorageV1 } from "@pai/core";
import { makeThreadRow, scriptedModel } from "@pai/core/testing";
import pg from "pg";
import { afterAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { kyselyStorage, migrateToLatest, postgresNotifier } from "../src/index.js";
import { openEngine } from "./support/engines.js";

const engine = await openEngine("postgres", "notify");
const url = process.env.PAI_TEST_POSTGRES_URL ?? "postgres://postgres@127.0.0.1:5432/test";

/** Collects messages and resolves once `count` have arrived. */
function collector() {
  const messages: NotifierMessage[] = [];
  const waiters: Array<{ count: number; resolve: () => void }> = [];
  const listener = (message: NotifierMessage) => {
    messages.push(message);
    for (const waiter of waiters) if (messages.length >= waiter.count) waiter.resolve();
  };
  const until = (count: number) =>
    new Promise<void>((resolve, reject) => {
      if (messages.length >= count) return resolve();
      waiters.push({ count, resolve });
      setTimeout(() => reject(new Error(`got ${messages.length} of ${count} messages`)), 5_000).unref();
    });
  return { messages, listener, until };
}

describe.skipIf("skip" in engine)("postgresNotifier", () => {
  const channel = `pai_test_${globalThis.crypto.randomUUID().slice(0, 8)}`;
  const pool = new pg.Pool({ connectionString: url, max: 2 });
  // Publisher and watcher stand for two servers: separate pools, separate LISTEN connections.
  const serverA = postgresNotifier({ connectionString: url, channel });
  const serverB = postgresNotifier({ pool, channel });
  afterAll(async () => {
    await serverA.close();
    await serverB.close();
    await pool.end();
    if (!("skip" in engine)) await engine.dispose();
  });

  it("delivers messages published on one connection to a subscriber on another, in order", async () => {
    const { messages, listener, until } = collector();
    const unsubscribe = serverB.subscribe("thread-1", listener);
    serverB.subscribe("thread-2", () => expect.fail("a listener of another thread was called"));
    await serverB.ready();
    const live = (delta: string): NotifierMessage => ({
      type: "live",
      threadId: "thread-1",
      event: { type: "text-delta", threadId: "thread-1", runId: "r", messageId: "m", delta },
    });
    // Identical payloads must both arrive (Postgres folds duplicates only inside one transaction).
    for (const message of [live("a"), live("a"), live("b")]) await serverA.publish(message);
    await serverA.publish({ type: "thread-advanced", threadId: "thread-1", version: 3 });
    await until(4);
    expect(messages).toEqual([
      live("a"),
      live("a"),
      live("b"),
      { type: "thread-advanced", threadId: "thread-1", version: 3 },
    ]);
    unsubscribe();
  });

  it("publishes fired together go out in batches and still arrive all, in order, duplicates included", async () => {
    const { messages, listener, until } = collector();
    serverB.subscribe("burst", listener);
    await serverB.ready();
    const live = (delta: string): NotifierMessage => ({
      type: "live",
      threadId: "burst",
      event: { type: "text-delta", threadId: "burst", runId: "r", messageId: "m", delta },
    });
    // Not awaited one by one: they queue behind each other and are sent many per statement.
    const deltas = Array.from({ length: 250 }, (_, index) => (index % 7 === 0 ? "same" : `d${index}`));
    await Promise.all(deltas.map((delta) => serverA.publish(live(delta))));
    await until(deltas.length);
    expect(messages).toEqual(deltas.map(live));
  });

  it("drops live events too large for NOTIFY and keeps delivering the rest", async () => {
    const { messages, listener, until } = collector();
    serverB.subscribe("thread-big", listener);
    await serverB.ready();
    const big: NotifierMessage = {
      type: "live",
      threadId: "thread-big",
      event: {
        type: "text-delta",
        threadId: "thread-big",
        runId: "r",
        messageId: "m",
        delta: "x".repeat(10_000),
      },
    };
    await serverA.publish(big);
    await serverA.publish({ type: "thread-advanced", threadId: "thread-big", version: 1 });
    await until(1);
    expect(messages).toEqual([{ type: "thread-advanced", threadId: "thread-big", version: 1 }]);
  });

  it("sends thread-advanced without the committed batch a runtime attaches: other servers read it from storage", async () => {
    const { messages, listener, until } = collector();
    const unsubscribe = serverB.subscribe("thread-batch", listener);
    await serverB.ready();
    // A batch far larger than a NOTIFY payload: had it been sent, the message would be dropped.
    const message = "x".repeat(20_000);
    await serverA.publish({
      type: "thread-advanced",
      threadId: "thread-batch",
      version: 7,
      committed: {
        createdAt: "2026-01-01T00:00:00.000Z",
        events: [
          { type: "thread-updated", thread: makeThreadRow({ threadId: "thread-batch", title: message }) },
        ],
      },
    });
    await until(1);
    expect(messages).toEqual([{ type: "thread-advanced", threadId: "thread-batch", version: 7 }]);
    unsubscribe();
  });

  it("publishes thread-advanced for each commit of a storage given the notifier", async () => {
    if ("skip" in engine) return;
    await migrateToLatest(engine.db, { tablePrefix: engine.prefix });
    const storage = kyselyStorage({ db: engine.db, tablePrefix: engine.prefix, notifier: serverA });
    const { messages, listener, until } = collector();
    serverB.subscribe("committed", listener);
    await serverB.ready();
    const thread = makeThreadRow({ threadId: "committed", scopeKey: "s" });
    await storage.commit({
      threadId: "committed",
      expectedVersion: 0,
      events: [{ type: "thread-updated", thread }],
      now: thread.updatedAt,
    });
    await storage.commit({
      threadId: "committed",
      expectedVersion: 1,
      events: [{ type: "thread-updated", thread }],
      now: thread.updatedAt,
    });
    await until(2);
    expect(messages).toEqual(
      [1, 2].map((version) => ({ type: "thread-advanced", threadId: "committed", version })),
    );
  });

  it("gives its own subscribers each message at once, batch included, and drops the echo from Postgres", async () => {
    // A third server of its own: the reconnect test below needs serverA never to have listened.
    const serverC = postgresNotifier({ connectionString: url, channel });
    const local = collector();
    const remote = collector();
    serverC.subscribe("local", local.listener);
    serverB.subscribe("local", remote.listener);
    await Promise.all([serverC.ready(), serverB.ready()]);
    const committed = {
      createdAt: "2026-01-01T00:00:00.000Z",
      events: [{ type: "thread-updated" as const, thread: makeThreadRow({ threadId: "local" }) }],
    };
    const live = (delta: string): NotifierMessage => ({
      type: "live",
      threadId: "local",
      event: { type: "text-delta", threadId: "local", runId: "r", messageId: "m", delta },
    });
    const big = live("x".repeat(10_000));
    const published = [
      serverC.publish({ type: "thread-advanced", threadId: "local", version: 1, committed }),
      serverC.publish(live("a")),
      serverC.publish(big),
    ];
    // Delivered in the call, before any NOTIFY went out: no round trip, and the batch kept.
    expect(local.messages).toEqual([
      { type: "thread-advanced", threadId: "local", version: 1, committed },
      live("a"),
      big,
    ]);
    await Promise.all(published);
    // Another server gets the version without the batch, and no live event too large for NOTIFY.
    await remote.until(2);
    expect(remote.messages).toEqual([{ type: "thread-advanced", threadId: "local", version: 1 }, live("a")]);
    // The echo reached serverC's connection as it reached serverB's, and was dropped there.
    await serverC.publish(live("marker"));
    await remote.until(3);
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(local.messages).toHaveLength(4);
    await serverC.close();
  });

  it("a watcher in the process that runs the thread gets every commit without reading the event log", async () => {
    if ("skip" in engine) return;
    await migrateToLatest(engine.db, { tablePrefix: engine.prefix });
    const notifier = postgresNotifier({ pool, channel });
    const base = kyselyStorage({ db: engine.db, tablePrefix: engine.prefix, notifier });
    let eventReads = 0;
    const storage: StorageV1 = {
      ...base,
      readEvents: (input) => {
        eventReads++;
        return base.readEvents(input);
      },
    };
    const add = defineTool({
      id: "test.notify.add",
      description: "Add",
      inputSchema: z.object({ a: z.number(), b: z.number() }),
      execute: async ({ input }) => input.a + input.b,
    });
    const pai = createAgentRuntime({
      agent: defineAgent({ tools: { add } }),
      storage,
      model: scriptedModel([{ toolCalls: [{ toolName: "add", input: { a: 1, b: 2 } }] }, { text: "3" }]),
      scope: () => ({ scopeKey: "s" }),
    });
    const identity = {};
    const thread = await pai.service.threads.create({ identity });
    const controller = new AbortController();
    const versions: number[] = [];
    const watching = (async () => {
      for await (const event of pai.service.threads.watch({
        identity,
        threadId: thread.threadId,
        afterVersion: thread.version,
        signal: controller.signal,
      })) {
        if (event.type === "committed") versions.push(event.version);
      }
    })();
    await notifier.ready();
    await new Promise((resolve) => setTimeout(resolve, 20));
    const readsBefore = eventReads;
    await pai.service.threads.send({ identity, threadId: thread.threadId, message: { text: "1+2?" } });
    await pai.waitForIdle(thread.threadId);
    const last = (await base.loadThread({ threadId: thread.threadId }))!.thread.version;
    while (versions.at(-1) !== last) await new Promise((resolve) => setTimeout(resolve, 5));
    // The echoes of these commits come back through Postgres; give them time to arrive.
    await new Promise((resolve) => setTimeout(resolve, 100));
    controller.abort();
    await watching;
    expect(versions).toEqual(
      Array.from({ length: last - thread.version }, (_, index) => thread.version + index + 1),
    );
    expect(eventReads - readsBefore).toBe(0);
    await pai.close();
    await notifier.close();
  });

  it("what is published within publishDelayMs shares one NOTIFY statement; 0 sends each on the next turn", async () => {
    const statements: string[] = [];
    const counting = {
      options: pool.options,
      query: (text: string, values?: unknown[]) => {
        statements.push(text);
        return pool.query(text, values);
      },
    };
    const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
    const live = (threadId: string, delta: string): NotifierMessage => ({
      type: "live",
      threadId,
      event: { type: "text-delta", threadId, runId: "r", messageId: "m", delta },
    });
    for (const [delayMs, expected] of [
      [200, 1],
      [0, 3],
    ] as const) {
      statements.length = 0;
      const threadId = `spaced-${delayMs}`;
      const { messages, listener, until } = collector();
      serverB.subscribe(threadId, listener);
      await serverB.ready();
      const publisher = postgresNotifier({
        pool: counting,
        channel,
        publishDelayMs: delayMs,
        minPublishIntervalMs: 0,
      });
      const sent: Promise<void>[] = [];
      // Three publishes 20 ms apart, as the commits of one run come.
      for (const delta of ["a", "b", "c"]) {
        sent.push(publisher.publish(live(threadId, delta)));
        await sleep(20);
      }
      await Promise.all(sent);
      await until(3);
      expect(messages).toEqual(["a", "b", "c"].map((delta) => live(threadId, delta)));
      expect(statements.filter((text) => text.includes("pg_notify"))).toHaveLength(expected);
      await publisher.close();
    }
  });

  /** The pool, recording when each NOTIFY statement was sent and how many payloads it carried. */
  const timedPool = () => {
    const statements: Array<{ at: number; payloads: number }> = [];
    const timed = {
      options: pool.options,
      query: (text: string, values?: unknown[]) => {
        if (text.includes("pg_notify"))
          statements.push({ at: performance.now(), payloads: (values?.length ?? 1) - 1 });
        return pool.query(text, values);
      },
    };
    return { statements, timed };
  };

  it("sends a lone publish on the next turn, and spaces later statements by minPublishIntervalMs", async () => {
    const { statements, timed } = timedPool();
    const threadId = "interval";
    const { messages, listener, until } = collector();
    serverB.subscribe(threadId, listener);
    await serverB.ready();
    const publisher = postgresNotifier({ pool: timed, channel, minPublishIntervalMs: 200 });
    const advanced = (version: number): NotifierMessage => ({ type: "thread-advanced", threadId, version });
    const first = publisher.publish(advanced(1));
    // Not held back by the interval: nothing was sent before it.
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(statements).toHaveLength(1);
    await first;
    // Three more within the interval of that statement: they wait for it to pass, then share one.
    const later = [2, 3, 4].map((version) => publisher.publish(advanced(version)));
    await Promise.all(later);
    await until(4);
    expect(messages).toEqual([1, 2, 3, 4].map(advanced));
    expect(statements.map((statement) => statement.payloads)).toEqual([1, 3]);
    const [one, two] = statements.map((statement) => statement.at);
    expect((two ?? 0) - (one ?? 0)).toBeGreaterThanOrEqual(195);
    await publisher.close();
  });

  it("spaces statements 16 ms apart by default", async () => {
    const { statements, timed } = timedPool();
    const publisher = postgresNotifier({ pool: timed, channel });
    const advanced = (version: number): NotifierMessage => ({
      type: "thread-advanced",
      threadId: "default-interval",
      version,
    });
    // The first statement may open a connection, which outlasts any interval: time the next two.
    for (const version of [1, 2, 3]) await publisher.publish(advanced(version));
    expect(statements.map((statement) => statement.payloads)).toEqual([1, 1, 1]);
    const [, two, three] = statements.map((statement) => statement.at);
    expect((three ?? 0) - (two ?? 0)).toBeGreaterThanOrEqual(15);
    await publisher.close();
  });

  it("does not hold back a full statement's worth for the interval", async () => {
    const { statements, timed } = timedPool();
    const publisher = postgresNotifier({ pool: timed, channel, minPublishIntervalMs: 1000 });
    const sent = Array.from({ length: 250 }, (_, index) =>
      publisher.publish({ type: "thread-advanced", threadId: "full", version: index + 1 }),
    );
    await Promise.all(sent.slice(0, 200));
    // Two full statements back to back; only the remainder waits for the interval.
    expect(statements.map((statement) => statement.payloads)).toEqual([100, 100]);
    expect((statements[1]?.at ?? 0) - (statements[0]?.at ?? 0)).toBeLessThan(500);
    await Promise.all(sent);
    expect(statements.map((statement) => statement.payloads)).toEqual([100, 100, 50]);
    await publisher.close();
  });

  it("refuses a publishDelayMs or minPublishIntervalMs that is not a number of milliseconds from 0 to 1000", () => {
    for (const value of [-1, 1001, Number.NaN, Number.POSITIVE_INFINITY, "5"]) {
      expect(() => postgresNotifier({ pool, channel, publishDelayMs: value as never })).toThrow(
        /publishDelayMs must be a number of milliseconds from 0 to 1000/,
      );
      expect(() => postgresNotifier({ pool, channel, minPublishIntervalMs: value as never })).toThrow(
        /minPublishIntervalMs must be a number of milliseconds from 0 to 1000/,
      );
    }
  });

  it("reconnects and listens again after its connection is killed", async () => {
    const { messages, listener, until } = collector();
    serverB.subscribe("after-kill", listener);
    await serverB.ready();
    const killed = await pool.query(
      "select pg_terminate_backend(pid) from pg_stat_activity where query = $1 and pid <> pg_backend_pid()",
      [`LISTEN "${channel}"`],
    );
    expect(killed.rowCount).toBe(1); // only serverB listens: serverA never subscribed
    // Publish until the reconnected listener hears one (messages sent while it is down are lost by design).
    for (let attempt = 0; attempt < 50 && messages.length === 0; attempt++) {
      await serverA.publish({ type: "thread-advanced", threadId: "after-kill", version: attempt });
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    await until(1);
    expect(messages[0]).toMatchObject({ type: "thread-advanced", threadId: "after-kill" });
  });
});
