import { DatabaseSync } from "node:sqlite";
import { PGlite } from "@electric-sql/pglite";
import {
  createMemoryNotifier,
  defineAgent,
  defineTool,
  type NotifierV1,
  type StorageV1,
  type WatchEvent,
} from "@pai/core";
import {
  createNodeSqliteDialect,
  createPgliteDialect,
  kyselyStorage,
  migrateToLatest,
  tableNames,
} from "@pai/storage-kysely";
import { memoryStorage } from "@pai/storage-memory";
import { Kysely } from "kysely";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { createTestRuntime } from "../support/test-runtime.js";
import { deferred, projectedPart, scripted } from "./_helpers.js";

const progressSchema = z.object({
  label: z.string(),
  pct: z.number().min(0).max(1),
  note: z.string().optional(),
});

/** A tool whose execute is supplied per test, with one declared `progress` channel. */
const analyze = (execute: (ctx: any) => unknown) =>
  defineTool({
    id: "test.tool-data.analyze.v1",
    description: "Analyze a file",
    inputSchema: z.object({}),
    dataSchemas: { progress: progressSchema },
    execute,
  });

const callAnalyze = [
  { toolCalls: [{ toolName: "analyze", toolCallId: "call-a", input: {} }] },
  { text: "Analyzed." },
];

describe("tool data", () => {
  it("writes are validated by the channel schema and undeclared channels are rejected", async () => {
    const codes: string[] = [];
    const t = await createTestRuntime({
      agent: defineAgent({
        tools: {
          analyze: analyze(async (ctx) => {
            for (const write of [
              () => ctx.data.write("progress", { label: "Reading", pct: 7 }),
              () => ctx.data.write("other", { label: "x", pct: 0 }),
            ]) {
              try {
                await write();
                codes.push("written");
              } catch (error) {
                codes.push((error as { code: string }).code);
              }
            }
            return null;
          }),
        },
      }),
      model: callAnalyze,
    });
    const threadId = await t.createThread();
    const snapshot = await t.send(threadId, "go");

    expect(codes).toEqual(["INVALID_INPUT", "INVALID_INPUT"]);
    expect(snapshot.toolData).toEqual([]);
  });

  it("values are JSON-normalized: undefined properties are omitted", async () => {
    const t = await createTestRuntime({
      agent: defineAgent({
        tools: {
          analyze: analyze(async (ctx) => {
            await ctx.data.write("progress", { label: "Reading", pct: 0.2, note: undefined }, { id: "read" });
            return null;
          }),
        },
      }),
      model: callAnalyze,
    });
    const threadId = await t.createThread();
    const snapshot = await t.send(threadId, "go");

    expect(snapshot.toolData).toHaveLength(1);
    expect(snapshot.toolData[0]!.value).toEqual({ label: "Reading", pct: 0.2 });
    expect(Object.keys(snapshot.toolData[0]!.value as object)).not.toContain("note");
  });

  it("the same id updates in place, list() returns the latest items and the part groups them by channel", async () => {
    let listed: unknown;
    const t = await createTestRuntime({
      agent: defineAgent({
        tools: {
          analyze: analyze(async (ctx) => {
            await ctx.data.write("progress", { label: "Reading", pct: 0.2 }, { id: "read" });
            await ctx.data.write("progress", { label: "Summarizing", pct: 0.8 }, { id: "summary" });
            await ctx.data.write("progress", { label: "Reading", pct: 0.6 }, { id: "read" });
            listed = await ctx.data.list("progress");
            return null;
          }),
        },
      }),
      model: callAnalyze,
    });
    const threadId = await t.createThread();
    const snapshot = await t.send(threadId, "go");

    expect(listed).toEqual([
      { id: "read", value: { label: "Reading", pct: 0.6 }, updatedAt: expect.any(String) },
      { id: "summary", value: { label: "Summarizing", pct: 0.8 }, updatedAt: expect.any(String) },
    ]);
    const part = projectedPart(snapshot, "call-a");
    expect(part.data.progress).toEqual(listed);
    expect(snapshot.toolData).toHaveLength(2);
  });

  it("items without an id are appended as separate entries", async () => {
    const t = await createTestRuntime({
      agent: defineAgent({
        tools: {
          analyze: analyze(async (ctx) => {
            await ctx.data.write("progress", { label: "one", pct: 0.1 });
            await ctx.data.write("progress", { label: "two", pct: 0.2 });
            return null;
          }),
        },
      }),
      model: callAnalyze,
    });
    const threadId = await t.createThread();
    const snapshot = await t.send(threadId, "go");

    const items = projectedPart(snapshot, "call-a").data.progress as Array<{ id: string; value: unknown }>;
    expect(items.map((item) => item.value)).toEqual([
      { label: "one", pct: 0.1 },
      { label: "two", pct: 0.2 },
    ]);
    expect(new Set(items.map((item) => item.id)).size).toBe(2);
  });

  it("durable items are in snapshots and survive a new runtime instance on the same storage", async () => {
    const storage = memoryStorage();
    const agent = defineAgent({
      tools: {
        analyze: analyze(async (ctx) => {
          await ctx.data.write("progress", { label: "Done", pct: 1 }, { id: "done" });
          return null;
        }),
      },
    });
    const first = await createTestRuntime({ agent, storage, model: callAnalyze });
    const threadId = await first.createThread();
    await first.send(threadId, "go");
    await first.close();

    const second = await createTestRuntime({ agent, storage, model: [] });
    const reloaded = await second.snapshot(threadId);
    expect(projectedPart(reloaded, "call-a").data.progress).toEqual([
      { id: "done", value: { label: "Done", pct: 1 }, updatedAt: expect.any(String) },
    ]);
  });

  it("transient items reach live watchers only and never storage", async () => {
    const storage = memoryStorage();
    const base = createMemoryNotifier();
    const subscribed = deferred();
    const notifier: NotifierV1 = {
      specificationVersion: "v1",
      publish: (message) => base.publish(message),
      subscribe(threadId, listener) {
        const unsubscribe = base.subscribe(threadId, listener);
        subscribed.resolve();
        return unsubscribe;
      },
    };
    const t = await createTestRuntime({
      storage,
      notifier,
      agent: defineAgent({
        tools: {
          analyze: analyze(async (ctx) => {
            await ctx.data.write(
              "progress",
              { label: "TRANSIENT-BYTES", pct: 0.45 },
              { id: "dl", transient: true },
            );
            await ctx.data.write("progress", { label: "Durable", pct: 1 }, { id: "final" });
            return null;
          }),
        },
      }),
      model: callAnalyze,
    });
    const threadId = await t.createThread();
    const controller = new AbortController();
    const events: WatchEvent[] = [];
    const watching = (async () => {
      for await (const event of t.pai.service.threads.watch({
        identity: t.identity,
        threadId,
        signal: controller.signal,
      })) {
        events.push(event);
      }
    })();
    await subscribed.promise;
    await t.send(threadId, "go");
    controller.abort();
    await watching;

    const transient = events.filter(
      (event) => event.type === "live" && event.event.type === "tool-data-transient",
    );
    expect(transient).toHaveLength(1);
    expect(transient[0]).toMatchObject({
      event: { item: { channel: "progress", itemId: "dl", value: { label: "TRANSIENT-BYTES", pct: 0.45 } } },
    });

    const rows = await storage.loadThread({ threadId });
    const stored = await storage.readEvents({ threadId, afterVersion: 0 });
    expect(rows!.toolData.map((item) => item.itemId)).toEqual(["final"]);
    expect(JSON.stringify(rows)).not.toContain("TRANSIENT-BYTES");
    expect(JSON.stringify(stored)).not.toContain("TRANSIENT-BYTES");
    const committed = events.filter((event) => event.type === "committed");
    expect(JSON.stringify(committed)).not.toContain("TRANSIENT-BYTES");
    expect(projectedPart(await t.snapshot(threadId), "call-a").data.progress).toHaveLength(1);
  });

  it("tool data is not model-visible", async () => {
    const t = await createTestRuntime({
      agent: defineAgent({
        tools: {
          analyze: analyze(async (ctx) => {
            await ctx.data.write("progress", { label: "SECRET-PROGRESS-LABEL", pct: 1 }, { id: "x" });
            return { summary: "ok" };
          }),
        },
      }),
      model: callAnalyze,
    });
    const threadId = await t.createThread();
    await t.send(threadId, "go");

    expect(scripted(t).calls).toHaveLength(2);
    expect(JSON.stringify(scripted(t).calls[1]!.prompt)).not.toContain("SECRET-PROGRESS-LABEL");
  });

  it("a resumed call lists the items it wrote before suspending and keeps updating them", async () => {
    const lists: unknown[] = [];
    const tool = defineTool({
      id: "test.tool-data.resumable.v1",
      description: "Resumable",
      inputSchema: z.object({}),
      dataSchemas: { progress: progressSchema },
      suspend: { go: { suspendSchema: z.object({}), resumeSchema: z.object({}) } },
      execute: async (ctx) => {
        if (ctx.entry.type === "initial") {
          await ctx.data.write("progress", { label: "Waiting", pct: 0.5 }, { id: "phase" });
          return ctx.suspend("go", {});
        }
        lists.push(await ctx.data.list("progress"));
        await ctx.data.write("progress", { label: "Done", pct: 1 }, { id: "phase" });
        return null;
      },
    });
    const t = await createTestRuntime({
      agent: defineAgent({ tools: { resumable: tool } }),
      model: [{ toolCalls: [{ toolName: "resumable", toolCallId: "call-r", input: {} }] }, { text: "Ok." }],
    });
    const threadId = await t.createThread();
    const waiting = await t.send(threadId, "go");
    expect(projectedPart(waiting, "call-r").data.progress).toMatchObject([
      { id: "phase", value: { label: "Waiting", pct: 0.5 } },
    ]);

    const done = await t.submit(threadId, "resumable.go", {});
    expect(lists).toEqual([
      [{ id: "phase", value: { label: "Waiting", pct: 0.5 }, updatedAt: expect.any(String) }],
    ]);
    expect(projectedPart(done, "call-r").data.progress).toMatchObject([
      { id: "phase", value: { label: "Done", pct: 1 } },
    ]);
  });
});

/** A storage plus a dump of every stored row, so tests can prove what never reached it. */
type StorageUnderTest = {
  storage: StorageV1;
  dumpRows(threadId: string): Promise<string>;
  dispose(): Promise<void>;
};

async function sqlStorage(db: Kysely<any>, options: { awaitDestroy: boolean }): Promise<StorageUnderTest> {
  const tablePrefix = "pai_behaviour_";
  await migrateToLatest(db, { tablePrefix });
  return {
    storage: kyselyStorage({ db, tablePrefix }),
    async dumpRows() {
      const dumps: unknown[] = [];
      for (const table of Object.values(tableNames(tablePrefix))) {
        dumps.push(await db.selectFrom(table).selectAll().execute());
      }
      return JSON.stringify(dumps);
    },
    // PGlite's close did not settle here (reported); its in-process database is dropped with the worker.
    dispose: async () => {
      const destroyed = db.destroy().catch(() => undefined);
      if (options.awaitDestroy) await destroyed;
    },
  };
}

const storages: Array<[string, () => Promise<StorageUnderTest>]> = [
  [
    "memory",
    async () => {
      const storage = memoryStorage();
      return {
        storage,
        dumpRows: async (threadId) =>
          JSON.stringify([
            await storage.loadThread({ threadId }),
            await storage.readEvents({ threadId, afterVersion: 0 }),
          ]),
        dispose: async () => undefined,
      };
    },
  ],
  [
    "sqlite",
    () =>
      sqlStorage(new Kysely({ dialect: createNodeSqliteDialect(new DatabaseSync(":memory:")) }), {
        awaitDestroy: true,
      }),
  ],
  [
    "pglite",
    () => sqlStorage(new Kysely({ dialect: createPgliteDialect(new PGlite()) }), { awaitDestroy: false }),
  ],
];

describe.each(storages)("tool data on %s storage", (_name, open) => {
  it("transient items never reach a storage row and durable items survive a new runtime instance", async () => {
    const under = await open();
    try {
      const agent = defineAgent({
        tools: {
          analyze: analyze(async (ctx) => {
            await ctx.data.write(
              "progress",
              { label: "TRANSIENT-BYTES", pct: 0.3 },
              { id: "dl", transient: true },
            );
            await ctx.data.write("progress", { label: "Durable", pct: 0.5 }, { id: "phase" });
            await ctx.data.write("progress", { label: "Durable", pct: 1 }, { id: "phase" });
            return null;
          }),
        },
      });
      const first = await createTestRuntime({ agent, storage: under.storage, model: callAnalyze });
      const threadId = await first.createThread();
      await first.send(threadId, "go");
      await first.close();

      const rows = await under.dumpRows(threadId);
      expect(rows).toContain("Durable");
      expect(rows).not.toContain("TRANSIENT-BYTES");

      const second = await createTestRuntime({ agent, storage: under.storage, model: [] });
      const reloaded = await second.snapshot(threadId);
      expect(projectedPart(reloaded, "call-a").data.progress).toEqual([
        { id: "phase", value: { label: "Durable", pct: 1 }, updatedAt: expect.any(String) },
      ]);
      await second.close();
    } finally {
      await under.dispose();
    }
  });
});
