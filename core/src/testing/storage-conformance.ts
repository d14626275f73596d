import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { PaiError } from "../errors/pai-error.js";
import type { JsonObject, JsonValue } from "../json/json-value.js";
import type { StorageCommitResult, StorageV1 } from "../ports/storage.js";
import type { StoredThreadEvents, ThreadEvent } from "../state/events.js";
import type { ActionRow, MessageRow, RunRow, ThreadRow, ToolDataRow } from "../state/rows.js";
import { applyStoredEvents, type ThreadSnapshot } from "../state/snapshot.js";
import { makeActionRow, makeMessageRow, makeRunRow, makeThreadRow, makeToolDataRow } from "./rows.js";

/** The named groups of the storage conformance suite, in the order they run. */
export const STORAGE_CONFORMANCE_GROUPS = [
  "basics",
  "conflicts",
  "rows",
  "events",
  "threads",
  "actions",
  "leases",
  "json",
  "write-cost",
] as const;

export type StorageConformanceGroup = (typeof STORAGE_CONFORMANCE_GROUPS)[number];

/** Why a group does not run against an adapter, and where its behaviour is tested instead. */
export type StorageConformanceSkip = { reason: string; testedIn: string };

export type StorageConformanceOptions<TStorage extends StorageV1 = StorageV1> = {
  /** Names the vitest `describe` block, e.g. `"memory"` or `"postgres"`. */
  name: string;
  /** Called once before the suite; the same storage serves every test. */
  create: () => Promise<TStorage> | TStorage;
  /** Optional: empties the storage before every test (tests never depend on it: ids are unique per run). */
  reset?: (storage: TStorage) => Promise<void>;
  /** Called once after the suite. Without it the suite calls `storage.close?.()`. */
  dispose?: (storage: TStorage) => Promise<void>;
  /** Groups this adapter cannot run, each with a reason and a pointer to where it is tested instead. */
  skip?: Partial<Record<StorageConformanceGroup, StorageConformanceSkip>>;
};

/**
 * Registers the storage conformance suite as vitest `describe`/`it` blocks. Every storage
 * adapter runs the same suite; it only uses timestamps it passes in (never a clock) and ids
 * unique to this run, so it works against a shared, non-empty database.
 *
 * @example
 * import { runStorageConformance } from "@pai/core/testing/conformance";
 * import { memoryStorage } from "@pai/storage-memory";
 *
 * runStorageConformance({ name: "memory", create: () => memoryStorage() });
 */
export function runStorageConformance<TStorage extends StorageV1>(
  options: StorageConformanceOptions<TStorage>,
): void {
  for (const [group, entry] of Object.entries(options.skip ?? {})) {
    if (!(STORAGE_CONFORMANCE_GROUPS as readonly string[]).includes(group)) {
      throw new PaiError(
        "INVALID_DEFINITION",
        `runStorageConformance: unknown group "${group}" in skip. Use one of ${STORAGE_CONFORMANCE_GROUPS.join(", ")}.`,
      );
    }
    if (!entry?.reason?.trim() || !entry.testedIn?.trim()) {
      throw new PaiError(
        "INVALID_DEFINITION",
        `runStorageConformance: skip.${group} needs a non-empty reason and testedIn (where the behaviour is tested instead).`,
      );
    }
  }

  // Ids are unique per run so the suite can share a database with earlier runs and other suites.
  const runTag = globalThis.crypto.randomUUID().slice(0, 8);
  let counter = 0;
  const id = (label: string) => `${label}-${runTag}-${++counter}`;

  let current: TStorage | undefined;
  const storage = (): TStorage => {
    if (!current)
      throw new Error("runStorageConformance: the storage was not created (see the beforeAll error).");
    return current;
  };

  const group = (name: StorageConformanceGroup, body: () => void) => {
    const skipped = options.skip?.[name];
    if (skipped) {
      describe(name, () => {
        it.skip(`skipped: ${skipped.reason} (tested in ${skipped.testedIn})`, () => {});
      });
      return;
    }
    describe(name, body);
  };

  const commit = (threadId: string, expectedVersion: number, events: ThreadEvent[], now: string) =>
    storage().commit({ threadId, expectedVersion, events, now });

  /** Commits and asserts success; returns the new version. */
  const commitOk = async (threadId: string, expectedVersion: number, events: ThreadEvent[], now: string) => {
    const result = await commit(threadId, expectedVersion, events, now);
    expect(result).toEqual({ ok: true, version: expectedVersion + 1 });
    return expectedVersion + 1;
  };

  /** Creates a thread (version 1) with optional extra events in the same commit. */
  const createThread = async (thread: ThreadRow, extra: ThreadEvent[] = [], now = thread.updatedAt) => {
    await commitOk(thread.threadId, 0, [{ type: "thread-updated", thread }, ...extra], now);
    return thread;
  };

  const load = async (threadId: string) => {
    const snapshot = await storage().loadThread({ threadId });
    if (!snapshot) throw new Error(`expected thread ${threadId} to exist`);
    return snapshot;
  };

  describe(`storage conformance: ${options.name}`, () => {
    beforeAll(async () => {
      current = await options.create();
    });
    afterAll(async () => {
      if (!current) return;
      if (options.dispose) await options.dispose(current);
      else await current.close?.();
      current = undefined;
    });
    if (options.reset) {
      const reset = options.reset;
      beforeEach(async () => {
        await reset(storage());
      });
    }

    group("basics", () => {
      it("creates a thread with expectedVersion 0 and a thread-updated event, then loads it", async () => {
        const thread = makeThreadRow({
          threadId: id("t"),
          scopeKey: id("s"),
          title: "hello",
          createdAt: at(0),
        });
        const result = await commit(thread.threadId, 0, [{ type: "thread-updated", thread }], at(1));
        expect(result).toEqual({ ok: true, version: 1 });
        expect(await storage().loadThread({ threadId: thread.threadId })).toEqual({
          thread: { ...thread, version: 1, updatedAt: at(1) },
          messages: [],
          runs: [],
          actions: [],
          toolData: [],
        });
      });

      it("sets version and updatedAt on every commit, ignoring the version carried by events", async () => {
        const thread = await createThread(
          makeThreadRow({ threadId: id("t"), scopeKey: id("s"), updatedAt: at(1) }),
        );
        const renamed = {
          ...thread,
          title: "renamed",
          status: "running" as const,
          version: 42,
          updatedAt: at(0),
        };
        await commitOk(thread.threadId, 1, [{ type: "thread-updated", thread: renamed }], at(5));
        expect((await load(thread.threadId)).thread).toEqual({ ...renamed, version: 2, updatedAt: at(5) });

        const message = makeMessageRow({ threadId: thread.threadId, messageId: id("m"), position: 1 });
        await commitOk(thread.threadId, 2, [{ type: "message-upserted", message }], at(9));
        const snapshot = await load(thread.threadId);
        expect(snapshot.thread).toEqual({ ...renamed, version: 3, updatedAt: at(9) });
        expect(snapshot.messages).toEqual([message]);
      });

      it("returns null from loadThread for an unknown thread", async () => {
        expect(await storage().loadThread({ threadId: id("missing") })).toBeNull();
      });

      it("returns a snapshot equal to replaying every committed event batch", async () => {
        const threadId = id("t");
        const scopeKey = id("s");
        const thread = makeThreadRow({ threadId, scopeKey, createdAt: at(0), updatedAt: at(0) });
        const userMessage = makeMessageRow({ threadId, messageId: id("m"), position: 1, createdAt: at(1) });
        const run = makeRunRow({
          threadId,
          runId: id("r"),
          status: "queued",
          createdAt: at(1),
          updatedAt: at(1),
        });
        await createThread(thread, [{ type: "message-upserted", message: userMessage }], at(1));

        const tail = makeMessageRow({
          threadId,
          messageId: id("m"),
          position: 2,
          role: "assistant",
          runId: run.runId,
          createdAt: at(2),
          updatedAt: at(2),
        });
        const running = { ...run, status: "running" as const, messageId: tail.messageId, updatedAt: at(2) };
        await commitOk(
          threadId,
          1,
          [
            { type: "run-upserted", run },
            { type: "run-upserted", run: running },
            { type: "thread-updated", thread: { ...thread, status: "running", activeRunId: run.runId } },
            { type: "message-upserted", message: tail },
          ],
          at(2),
        );

        const action = makeActionRow({
          threadId,
          actionId: id("a"),
          scopeKey,
          runId: run.runId,
          createdAt: at(3),
        });
        const progress = makeToolDataRow({ threadId, toolCallId: action.toolCallId, itemId: "p", value: 1 });
        await commitOk(
          threadId,
          2,
          [
            {
              type: "message-upserted",
              message: { ...tail, message: withText(tail.message, "step 1"), updatedAt: at(3) },
            },
            { type: "action-upserted", action },
            { type: "tool-data-upserted", item: { ...progress, updatedAt: at(3) } },
            { type: "run-upserted", run: { ...running, status: "waiting", step: 1, updatedAt: at(3) } },
            { type: "thread-updated", thread: { ...thread, status: "waiting", activeRunId: run.runId } },
          ],
          at(3),
        );
        await commitOk(
          threadId,
          3,
          [
            { type: "tool-data-upserted", item: { ...progress, value: 2, updatedAt: at(4) } },
            {
              type: "action-upserted",
              action: { ...action, state: "submitted", resume: { approved: true }, resolvedAt: at(4) },
            },
            { type: "run-upserted", run: { ...running, status: "completed", step: 2, finishedAt: at(4) } },
            { type: "thread-updated", thread: { ...thread, status: "idle", title: "done" } },
          ],
          at(4),
        );

        const batches = await storage().readEvents({ threadId, afterVersion: 0 });
        expect(batches.map((batch) => batch.version)).toEqual([1, 2, 3, 4]);
        expect(await load(threadId)).toEqual(replay(batches));
      });
    });

    group("conflicts", () => {
      it("rejects a stale expectedVersion with the current version and writes nothing", async () => {
        const thread = await createThread(
          makeThreadRow({ threadId: id("t"), scopeKey: id("s"), updatedAt: at(1) }),
        );
        const first = makeMessageRow({ threadId: thread.threadId, messageId: id("m"), position: 1 });
        await commitOk(thread.threadId, 1, [{ type: "message-upserted", message: first }], at(2));
        const before = await load(thread.threadId);
        const eventsBefore = await storage().readEvents({ threadId: thread.threadId, afterVersion: 0 });

        const lost = makeMessageRow({ threadId: thread.threadId, messageId: id("m"), position: 2 });
        const stale = await commit(
          thread.threadId,
          1,
          [
            { type: "message-upserted", message: lost },
            { type: "thread-updated", thread: { ...thread, title: "lost" } },
          ],
          at(3),
        );
        expect(stale).toEqual({ ok: false, reason: "conflict", currentVersion: 2 });
        const ahead = await commit(thread.threadId, 7, [{ type: "message-upserted", message: lost }], at(3));
        expect(ahead).toEqual({ ok: false, reason: "conflict", currentVersion: 2 });

        expect(await load(thread.threadId)).toEqual(before);
        expect(await storage().readEvents({ threadId: thread.threadId, afterVersion: 0 })).toEqual(
          eventsBefore,
        );
      });

      it("rejects creating a thread that already exists", async () => {
        const thread = await createThread(
          makeThreadRow({ threadId: id("t"), scopeKey: id("s"), title: "first" }),
        );
        const again = await commit(
          thread.threadId,
          0,
          [{ type: "thread-updated", thread: { ...thread, title: "second" } }],
          at(5),
        );
        expect(again).toEqual({ ok: false, reason: "conflict", currentVersion: 1 });
        expect((await load(thread.threadId)).thread.title).toBe("first");
        expect(await storage().readEvents({ threadId: thread.threadId, afterVersion: 0 })).toHaveLength(1);
      });

      it("rejects a commit to an unknown thread with currentVersion null", async () => {
        const threadId = id("t");
        const message = makeMessageRow({ threadId, messageId: id("m"), position: 1 });
        const result = await commit(threadId, 1, [{ type: "message-upserted", message }], at(1));
        expect(result).toEqual({ ok: false, reason: "conflict", currentVersion: null });
        expect(await storage().loadThread({ threadId })).toBeNull();
        expect(await storage().readEvents({ threadId, afterVersion: 0 })).toEqual([]);
      });

      it("lets exactly one of concurrent commits with the same expectedVersion win", async () => {
        const thread = await createThread(makeThreadRow({ threadId: id("t"), scopeKey: id("s") }));
        const contenders = Array.from({ length: 8 }, (_, index) =>
          makeMessageRow({ threadId: thread.threadId, messageId: id(`m${index}`), position: 1 }),
        );
        const results = await Promise.all(
          contenders.map((message) =>
            commit(thread.threadId, 1, [{ type: "message-upserted", message }], at(2)),
          ),
        );
        expectOneWinner(results);
        const winner = contenders[results.findIndex((result) => result.ok)];
        const snapshot = await load(thread.threadId);
        expect(snapshot.thread.version).toBe(2);
        expect(snapshot.messages).toEqual([winner]);
        const batches = await storage().readEvents({ threadId: thread.threadId, afterVersion: 0 });
        expect(batches.map((batch) => batch.version)).toEqual([1, 2]);
        expect(batches[1].events).toEqual([{ type: "message-upserted", message: winner }]);
      });

      it("lets exactly one of concurrent creations of the same thread win", async () => {
        const threadId = id("t");
        const scopeKey = id("s");
        const contenders = Array.from({ length: 8 }, (_, index) =>
          makeThreadRow({ threadId, scopeKey, title: `contender ${index}` }),
        );
        const results = await Promise.all(
          contenders.map((thread) => commit(threadId, 0, [{ type: "thread-updated", thread }], at(1))),
        );
        expectOneWinner(results);
        const winner = contenders[results.findIndex((result) => result.ok)];
        expect((await load(threadId)).thread).toEqual({ ...winner, version: 1, updatedAt: at(1) });
        expect(await storage().readEvents({ threadId, afterVersion: 0 })).toHaveLength(1);
      });
    });

    group("rows", () => {
      it("orders messages by position and upserts a message in place", async () => {
        const threadId = id("t");
        const [m1, m2, m3] = [1, 2, 3].map((position) =>
          makeMessageRow({ threadId, messageId: id(`m${position}`), position }),
        );
        await createThread(makeThreadRow({ threadId, scopeKey: id("s") }), [
          { type: "message-upserted", message: m3 },
          { type: "message-upserted", message: m1 },
          { type: "message-upserted", message: m2 },
        ]);
        expect((await load(threadId)).messages).toEqual([m1, m2, m3]);

        const edited = { ...m2, message: withText(m2.message, "edited"), updatedAt: at(7) };
        const m4 = makeMessageRow({ threadId, messageId: id("m4"), position: 4, role: "assistant" });
        await commitOk(
          threadId,
          1,
          [
            { type: "message-upserted", message: m4 },
            { type: "message-upserted", message: edited },
          ],
          at(7),
        );
        expect((await load(threadId)).messages).toEqual([m1, edited, m3, m4]);
      });

      it("inserts and updates runs", async () => {
        const threadId = id("t");
        const r1 = makeRunRow({ threadId, runId: id("r"), createdAt: at(1), updatedAt: at(1) });
        const r2 = makeRunRow({
          threadId,
          runId: id("r"),
          status: "queued",
          trigger: {
            type: "trigger",
            messageId: null,
            notification: "nightly",
            data: { n: 1 },
            hidden: true,
          },
          clientTools: [{ name: "pick", description: "Pick one", inputSchema: { type: "object" } }],
          clientData: { locale: "en" },
          createdAt: at(2),
          updatedAt: at(2),
        });
        await createThread(makeThreadRow({ threadId, scopeKey: id("s") }), [
          { type: "run-upserted", run: r1 },
          { type: "run-upserted", run: r2 },
        ]);
        expect((await load(threadId)).runs).toEqual([r1, r2]);

        const finished = {
          ...r1,
          status: "failed" as const,
          step: 3,
          error: "boom",
          finishedAt: at(3),
          updatedAt: at(3),
        };
        await commitOk(threadId, 1, [{ type: "run-upserted", run: finished }], at(3));
        expect((await load(threadId)).runs).toEqual([finished, r2]);
      });

      it("upserts actions by actionId and returns them from getAction", async () => {
        const threadId = id("t");
        const scopeKey = id("s");
        const a1 = makeActionRow({
          threadId,
          actionId: id("a"),
          scopeKey,
          input: { amount: 3 },
          createdAt: at(1),
        });
        const a2 = makeActionRow({
          threadId,
          actionId: id("a"),
          scopeKey,
          toolCallId: a1.toolCallId,
          suspendName: "review",
          name: "tool.review",
          episode: 2,
          createdAt: at(2),
        });
        await createThread(makeThreadRow({ threadId, scopeKey }), [
          { type: "action-upserted", action: a1 },
          { type: "action-upserted", action: a2 },
        ]);
        const submitted: ActionRow = {
          ...a1,
          state: "submitted",
          resume: { approved: true },
          resolvedAt: at(3),
          idempotencyKey: "key-1",
        };
        await commitOk(threadId, 1, [{ type: "action-upserted", action: submitted }], at(3));
        expect((await load(threadId)).actions).toEqual([submitted, a2]);
        expect(await storage().getAction({ threadId, actionId: a1.actionId })).toEqual(submitted);
        expect(await storage().getAction({ threadId, actionId: a2.actionId })).toEqual(a2);
      });

      it("updates tool data in place by (toolCallId, channel, itemId)", async () => {
        const threadId = id("t");
        const items = [
          makeToolDataRow({
            threadId,
            toolCallId: "c1",
            channel: "data",
            itemId: "i1",
            value: 1,
            updatedAt: at(1),
          }),
          makeToolDataRow({
            threadId,
            toolCallId: "c1",
            channel: "data",
            itemId: "i2",
            value: 2,
            updatedAt: at(2),
          }),
          makeToolDataRow({
            threadId,
            toolCallId: "c1",
            channel: "log",
            itemId: "i1",
            value: 3,
            updatedAt: at(3),
          }),
          makeToolDataRow({
            threadId,
            toolCallId: "c2",
            channel: "data",
            itemId: "i1",
            value: 4,
            updatedAt: at(4),
          }),
        ];
        await createThread(
          makeThreadRow({ threadId, scopeKey: id("s") }),
          items.map((item) => ({ type: "tool-data-upserted", item })),
        );
        expect((await load(threadId)).toolData).toEqual(items);

        const updated = { ...items[0], value: { status: "done", rows: [1, 2] }, updatedAt: at(9) };
        await commitOk(threadId, 1, [{ type: "tool-data-upserted", item: updated }], at(9));
        expect((await load(threadId)).toolData).toEqual([updated, items[1], items[2], items[3]]);
      });

      it("stores copies: mutating passed or returned objects never changes storage", async () => {
        const threadId = id("t");
        const scopeKey = id("s");
        const thread = makeThreadRow({ threadId, scopeKey, metadata: { tags: ["a"] } });
        const message = makeMessageRow({ threadId, messageId: id("m"), position: 1, text: "original" });
        const action = makeActionRow({ threadId, actionId: id("a"), scopeKey, input: { list: [1] } });
        const events: ThreadEvent[] = [
          { type: "thread-updated", thread },
          { type: "message-upserted", message },
          { type: "action-upserted", action },
        ];
        await commitOk(threadId, 0, events, at(1));
        const expected = structuredClone(await load(threadId));
        const expectedEvents = structuredClone(await storage().readEvents({ threadId, afterVersion: 0 }));

        // Mutate what was passed in.
        thread.metadata!.tags = ["changed"];
        (message.message.parts[0] as { text: string }).text = "changed";
        action.state = "cancelled";
        events.length = 0;
        expect(await load(threadId)).toEqual(expected);

        // Mutate what came out.
        const loaded = await load(threadId);
        loaded.thread.title = "changed";
        loaded.messages.length = 0;
        loaded.actions[0].state = "failed";
        const batches = await storage().readEvents({ threadId, afterVersion: 0 });
        batches[0].events.length = 0;
        const fetched = await storage().getAction({ threadId, actionId: action.actionId });
        (fetched!.input as { list: number[] }).list.push(2);
        const listed = await storage().listThreads({ scopeKey, limit: 10 });
        listed.threads[0].metadata = null;

        expect(await load(threadId)).toEqual(expected);
        expect(await storage().readEvents({ threadId, afterVersion: 0 })).toEqual(expectedEvents);
        expect(await storage().getAction({ threadId, actionId: action.actionId })).toEqual(
          expected.actions[0],
        );
        expect((await storage().listThreads({ scopeKey, limit: 10 })).threads).toEqual([expected.thread]);
      });
    });

    group("events", () => {
      it("reads committed batches after a version, ascending, with an optional limit", async () => {
        const threadId = id("t");
        const thread = makeThreadRow({ threadId, scopeKey: id("s") });
        const committed: Array<{ events: ThreadEvent[]; now: string }> = [
          { events: [{ type: "thread-updated", thread }], now: at(1) },
        ];
        for (let version = 2; version <= 5; version++) {
          committed.push({
            events: [
              {
                type: "message-upserted",
                message: makeMessageRow({ threadId, messageId: id("m"), position: version }),
              },
            ],
            now: at(version),
          });
        }
        for (const [index, entry] of committed.entries())
          await commitOk(threadId, index, entry.events, entry.now);

        const expected: StoredThreadEvents[] = committed.map((entry, index) => ({
          threadId,
          version: index + 1,
          events: entry.events,
          createdAt: entry.now,
        }));
        expect(await storage().readEvents({ threadId, afterVersion: 0 })).toEqual(expected);
        expect(await storage().readEvents({ threadId, afterVersion: 2 })).toEqual(expected.slice(2));
        expect(await storage().readEvents({ threadId, afterVersion: 2, limit: 2 })).toEqual(
          expected.slice(2, 4),
        );
        expect(await storage().readEvents({ threadId, afterVersion: 5 })).toEqual([]);
        expect(await storage().readEvents({ threadId: id("missing"), afterVersion: 0 })).toEqual([]);
      });

      it("pages through the log with limit: first page, next page after its last version, short last page", async () => {
        const threadId = id("t");
        await createThread(makeThreadRow({ threadId, scopeKey: id("s") }), [], at(1));
        for (let version = 2; version <= 7; version++) {
          const message = makeMessageRow({ threadId, messageId: id("m"), position: version });
          await commitOk(threadId, version - 1, [{ type: "message-upserted", message }], at(version));
        }
        const all = await storage().readEvents({ threadId, afterVersion: 0 });
        expect(all.map((batch) => batch.version)).toEqual([1, 2, 3, 4, 5, 6, 7]);

        const page = (afterVersion: number) => storage().readEvents({ threadId, afterVersion, limit: 3 });
        const first = await page(0);
        expect(first).toEqual(all.slice(0, 3));
        const second = await page(first.at(-1)!.version);
        expect(second).toEqual(all.slice(3, 6));
        const last = await page(second.at(-1)!.version);
        expect(last).toEqual(all.slice(6));
        expect(await page(last.at(-1)!.version)).toEqual([]);
        // A limit the log does not fill, or fills exactly, returns the rest of it.
        expect(await storage().readEvents({ threadId, afterVersion: 0, limit: 100 })).toEqual(all);
        expect(await storage().readEvents({ threadId, afterVersion: 0, limit: 7 })).toEqual(all);
        expect(await storage().readEvents({ threadId, afterVersion: 5, limit: 1 })).toEqual(all.slice(5, 6));
      });

      it("stores one batch per version holding all events of the commit in order", async () => {
        const threadId = id("t");
        const scopeKey = id("s");
        const thread = makeThreadRow({ threadId, scopeKey });
        await createThread(thread);
        const run = makeRunRow({ threadId, runId: id("r") });
        const events: ThreadEvent[] = [
          { type: "run-upserted", run },
          {
            type: "message-upserted",
            message: makeMessageRow({ threadId, messageId: id("m"), position: 1 }),
          },
          { type: "action-upserted", action: makeActionRow({ threadId, actionId: id("a"), scopeKey }) },
          { type: "tool-data-upserted", item: makeToolDataRow({ threadId, toolCallId: "c", itemId: "i" }) },
          { type: "thread-updated", thread: { ...thread, status: "waiting", activeRunId: run.runId } },
        ];
        await commitOk(threadId, 1, events, at(2));
        expect(await storage().readEvents({ threadId, afterVersion: 1 })).toEqual([
          { threadId, version: 2, events, createdAt: at(2) },
        ]);
      });
    });

    group("threads", () => {
      it("lists only the threads of a scope, optionally of one agent", async () => {
        const scopeA = id("s");
        const scopeB = id("s");
        const a1 = await createThread(
          makeThreadRow({ threadId: id("t"), scopeKey: scopeA, agentId: "x" }),
          [],
          at(1),
        );
        const a2 = await createThread(
          makeThreadRow({ threadId: id("t"), scopeKey: scopeA, agentId: "y" }),
          [],
          at(2),
        );
        const b1 = await createThread(
          makeThreadRow({ threadId: id("t"), scopeKey: scopeB, agentId: "x" }),
          [],
          at(3),
        );
        const stored = (thread: ThreadRow, seconds: number) => ({
          ...thread,
          version: 1,
          updatedAt: at(seconds),
        });

        expect(await storage().listThreads({ scopeKey: scopeA, limit: 10 })).toEqual({
          threads: [stored(a2, 2), stored(a1, 1)],
          nextCursor: null,
        });
        expect(await storage().listThreads({ scopeKey: scopeA, agentId: "x", limit: 10 })).toEqual({
          threads: [stored(a1, 1)],
          nextCursor: null,
        });
        expect((await storage().listThreads({ scopeKey: scopeB, limit: 10 })).threads).toEqual([
          stored(b1, 3),
        ]);
        expect((await storage().listThreads({ scopeKey: scopeB, agentId: "y", limit: 10 })).threads).toEqual(
          [],
        );
        expect(await storage().listThreads({ scopeKey: id("s"), limit: 10 })).toEqual({
          threads: [],
          nextCursor: null,
        });
      });

      it("orders threads by newest updatedAt first, then by threadId", async () => {
        const scopeKey = id("s");
        // Equal timestamps on purpose: ties are broken by threadId ascending.
        const times = [5, 3, 3, 8, 1, 3];
        const threads = [];
        for (const seconds of times) {
          threads.push(await createThread(makeThreadRow({ threadId: id("t"), scopeKey }), [], at(seconds)));
        }
        // A later commit moves the oldest thread to the top.
        await commitOk(threads[4].threadId, 1, [{ type: "thread-updated", thread: threads[4] }], at(9));
        const expected = threads
          .map((thread, index) =>
            index === 4
              ? { ...thread, version: 2, updatedAt: at(9) }
              : { ...thread, version: 1, updatedAt: at(times[index]) },
          )
          .sort(byNewest);
        const { threads: listed } = await storage().listThreads({ scopeKey, limit: 100 });
        expect(listed).toEqual(expected);
        expect(listed[0].threadId).toBe(threads[4].threadId);
      });

      it("pages with an opaque cursor without duplicates or gaps", async () => {
        const scopeKey = id("s");
        const times = [4, 2, 2, 2, 7, 1, 2];
        for (const seconds of times) {
          await createThread(makeThreadRow({ threadId: id("t"), scopeKey }), [], at(seconds));
        }
        const { threads: all } = await storage().listThreads({ scopeKey, limit: 100 });
        expect(all).toHaveLength(times.length);
        const pages = await collectPages(
          (cursor) => storage().listThreads({ scopeKey, limit: 3, cursor }),
          "threads",
        );
        expect(pages.length).toBeGreaterThanOrEqual(3);
        for (const page of pages) expect(page.length).toBeLessThanOrEqual(3);
        expect(pages.flat()).toEqual(all);
      });
    });

    group("actions", () => {
      it("gets an action by (threadId, actionId)", async () => {
        const scopeKey = id("s");
        const actionId = id("a");
        const first = makeActionRow({ threadId: id("t"), actionId, scopeKey, input: "first" });
        const second = makeActionRow({ threadId: id("t"), actionId, scopeKey, input: "second" });
        await createThread(makeThreadRow({ threadId: first.threadId, scopeKey }), [
          { type: "action-upserted", action: first },
        ]);
        await createThread(makeThreadRow({ threadId: second.threadId, scopeKey }), [
          { type: "action-upserted", action: second },
        ]);
        expect(await storage().getAction({ threadId: first.threadId, actionId })).toEqual(first);
        expect(await storage().getAction({ threadId: second.threadId, actionId })).toEqual(second);
        expect(await storage().getAction({ threadId: first.threadId, actionId: id("a") })).toBeNull();
        expect(await storage().getAction({ threadId: id("t"), actionId })).toBeNull();
      });

      it("lists actions of a scope, oldest first, by state, with pagination; other scopes stay invisible", async () => {
        const scopeKey = id("s");
        const otherScope = id("s");
        const t1 = id("t");
        const t2 = id("t");
        const states = [
          "pending",
          "submitted",
          "pending",
          "cancelled",
          "pending",
          "failed",
          "pending",
        ] as const;
        const actions = states.map((state, index) =>
          makeActionRow({
            threadId: index % 2 === 0 ? t1 : t2,
            actionId: id("a"),
            scopeKey,
            state,
            createdAt: at(10 + index),
            resolvedAt: state === "pending" ? null : at(20),
          }),
        );
        const foreign = makeActionRow({
          threadId: id("t"),
          actionId: id("a"),
          scopeKey: otherScope,
          createdAt: at(1),
        });
        const eventsOf = (threadId: string): ThreadEvent[] =>
          actions
            .filter((action) => action.threadId === threadId)
            .map((action) => ({ type: "action-upserted", action }));
        await createThread(makeThreadRow({ threadId: t1, scopeKey }), eventsOf(t1));
        await createThread(makeThreadRow({ threadId: t2, scopeKey }), eventsOf(t2));
        await createThread(makeThreadRow({ threadId: foreign.threadId, scopeKey: otherScope }), [
          { type: "action-upserted", action: foreign },
        ]);

        expect(await storage().listActions({ scopeKey, limit: 100 })).toEqual({ actions, nextCursor: null });
        const pending = actions.filter((action) => action.state === "pending");
        expect((await storage().listActions({ scopeKey, state: "pending", limit: 100 })).actions).toEqual(
          pending,
        );
        expect((await storage().listActions({ scopeKey, state: "failed", limit: 100 })).actions).toEqual([
          actions[5],
        ]);

        const pages = await collectPages(
          (cursor) => storage().listActions({ scopeKey, limit: 2, cursor }),
          "actions",
        );
        expect(pages.length).toBeGreaterThanOrEqual(4);
        for (const page of pages) expect(page.length).toBeLessThanOrEqual(2);
        expect(pages.flat()).toEqual(actions);
        const pendingPages = await collectPages(
          (cursor) => storage().listActions({ scopeKey, state: "pending", limit: 3, cursor }),
          "actions",
        );
        expect(pendingPages.flat()).toEqual(pending);

        expect((await storage().listActions({ scopeKey: otherScope, limit: 100 })).actions).toEqual([
          foreign,
        ]);
        expect((await storage().listActions({ scopeKey: id("s"), limit: 100 })).actions).toEqual([]);
      });
    });

    group("leases", () => {
      const setup = async (runs: Array<Partial<RunRow>>) => {
        const threadId = id("t");
        const rows = runs.map((run, index) =>
          makeRunRow({ threadId, runId: id("r"), createdAt: at(index), ...run }),
        );
        await createThread(
          makeThreadRow({ threadId, scopeKey: id("s") }),
          rows.map((run) => ({ type: "run-upserted", run })),
        );
        return { threadId, runs: rows };
      };
      const lease = (threadId: string, runId: string, owner: string, now: number, expiresAt: number) =>
        storage().acquireRunLease({ threadId, runId, owner, now: at(now), expiresAt: at(expiresAt) });

      it("acquires a free lease, renews it for the same owner, refuses others until it expires", async () => {
        const { threadId, runs } = await setup([{ status: "running" }]);
        const runId = runs[0].runId;
        expect(await lease(threadId, runId, "owner-a", 100, 130)).toBe(true);
        expect(await lease(threadId, runId, "owner-b", 110, 140)).toBe(false);
        expect(await lease(threadId, runId, "owner-a", 120, 150)).toBe(true);
        // Still held: the renewal moved the expiry from 130 to 150.
        expect(await lease(threadId, runId, "owner-b", 140, 170)).toBe(false);
        expect(await lease(threadId, runId, "owner-b", 160, 190)).toBe(true);
        expect(await lease(threadId, runId, "owner-a", 170, 200)).toBe(false);
        // Heartbeats are not thread changes.
        expect((await load(threadId)).thread.version).toBe(1);
      });

      it("releases a lease only for its owner", async () => {
        const { threadId, runs } = await setup([{ status: "running" }]);
        const runId = runs[0].runId;
        expect(await lease(threadId, runId, "owner-a", 100, 200)).toBe(true);
        await storage().releaseRunLease({ threadId, runId, owner: "owner-b" });
        expect(await lease(threadId, runId, "owner-b", 110, 210)).toBe(false);
        await storage().releaseRunLease({ threadId, runId, owner: "owner-a" });
        expect(await lease(threadId, runId, "owner-b", 120, 220)).toBe(true);
      });

      it("keeps a lease when a commit upserts its run", async () => {
        const { threadId, runs } = await setup([{ status: "running" }]);
        const run = runs[0];
        expect(await lease(threadId, run.runId, "owner-a", 100, 200)).toBe(true);
        await commitOk(
          threadId,
          1,
          [{ type: "run-upserted", run: { ...run, step: 1, updatedAt: at(110) } }],
          at(110),
        );
        expect(await lease(threadId, run.runId, "owner-b", 120, 220)).toBe(false);
        const recoverable = await recoverableOf(threadId, 120);
        expect(recoverable).toEqual([]);
      });

      it("takes a lease before the run's first commit and keeps it when the run is committed", async () => {
        const { threadId } = await setup([]);
        const run = makeRunRow({ threadId, runId: id("r"), status: "queued" });
        expect(await lease(threadId, run.runId, "owner-a", 100, 200)).toBe(true);
        expect(await lease(threadId, run.runId, "owner-b", 110, 210)).toBe(false);
        await commitOk(threadId, 1, [{ type: "run-upserted", run }], at(120));
        expect(await lease(threadId, run.runId, "owner-b", 130, 230)).toBe(false);
        expect(await recoverableOf(threadId, 130)).toEqual([]);
        expect(await recoverableOf(threadId, 200)).toEqual([{ threadId, runId: run.runId }]);
      });

      it("takes a run's lease in the commit that creates the run, and keeps other runs' leases", async () => {
        const { threadId, runs } = await setup([{ status: "running" }]);
        const other = runs[0];
        expect(await lease(threadId, other.runId, "owner-a", 100, 300)).toBe(true);
        const run = makeRunRow({ threadId, runId: id("r"), status: "running", createdAt: at(110) });
        const result = await storage().commit({
          threadId,
          expectedVersion: 1,
          events: [
            { type: "run-upserted", run },
            { type: "run-upserted", run: { ...other, step: 2, updatedAt: at(110) } },
          ],
          now: at(110),
          lease: { runId: run.runId, owner: "owner-b", expiresAt: at(200) },
        });
        expect(result).toEqual({ ok: true, version: 2 });
        expect(await lease(threadId, run.runId, "owner-a", 120, 220)).toBe(false);
        expect(await lease(threadId, run.runId, "owner-b", 130, 230)).toBe(true);
        expect(await lease(threadId, other.runId, "owner-b", 140, 240)).toBe(false);
        expect(await recoverableOf(threadId, 150)).toEqual([]);
        // A lease taken by a commit expires like any other.
        expect(await recoverableOf(threadId, 250)).toEqual([{ threadId, runId: run.runId }]);
      });

      it("rejects a commit lease for a run the commit does not upsert, writing nothing", async () => {
        const { threadId, runs } = await setup([{ status: "running" }]);
        const error = await storage()
          .commit({
            threadId,
            expectedVersion: 1,
            events: [{ type: "run-upserted", run: { ...runs[0], step: 1 } }],
            now: at(100),
            lease: { runId: "not-in-this-commit", owner: "owner-a", expiresAt: at(200) },
          })
          .then(
            () => null,
            (caught: unknown) => caught,
          );
        expect(error).toMatchObject({ code: "INVALID_INPUT" });
        expect((await load(threadId)).thread.version).toBe(1);
      });

      it("lists running and queued runs whose lease is absent or expired as recoverable", async () => {
        const { threadId, runs } = await setup([
          { status: "running" }, // 0: no lease -> recoverable
          { status: "queued" }, // 1: no lease -> recoverable
          { status: "running" }, // 2: lease expired -> recoverable
          { status: "running" }, // 3: lease held -> not recoverable
          { status: "waiting" }, // 4: parked -> never
          { status: "completed" }, // 5
          { status: "failed" }, // 6
          { status: "cancelled" }, // 7
        ]);
        expect(await lease(threadId, runs[2].runId, "owner-a", 100, 150)).toBe(true);
        expect(await lease(threadId, runs[3].runId, "owner-a", 100, 300)).toBe(true);
        const expected = [runs[0], runs[1], runs[2]].map((run) => ({ threadId, runId: run.runId }));
        expect(sortByRunId(await recoverableOf(threadId, 200))).toEqual(sortByRunId(expected));

        // Once finished, a run is no longer recoverable.
        await commitOk(
          threadId,
          1,
          [{ type: "run-upserted", run: { ...runs[0], status: "completed", finishedAt: at(210) } }],
          at(210),
        );
        expect(sortByRunId(await recoverableOf(threadId, 220))).toEqual(sortByRunId(expected.slice(1)));
        // After its expiry the held lease makes run 3 recoverable too.
        expect(sortByRunId(await recoverableOf(threadId, 400))).toEqual(
          sortByRunId([...expected.slice(1), { threadId, runId: runs[3].runId }]),
        );
        expect((await storage().listRecoverableRuns({ now: at(400), limit: 1 })).length).toBeLessThanOrEqual(
          1,
        );
      });
    });

    group("json", () => {
      it("round-trips JSON values exactly: unicode, nesting, numbers, null", async () => {
        const threadId = id("t");
        const scopeKey = id("s");
        const value = jsonSample();
        const thread = makeThreadRow({ threadId, scopeKey, title: "📎 naïve 漢字", metadata: value });
        const message = makeMessageRow({ threadId, messageId: id("m"), position: 1, text: tricky });
        message.message.metadata = value;
        const run = makeRunRow({ threadId, runId: id("r"), clientData: value });
        const action = makeActionRow({
          threadId,
          actionId: id("a"),
          scopeKey,
          input: value,
          resume: [value, null],
        });
        const items: ToolDataRow[] = [value, null, "", 0, -12.5, true, [], {}].map((itemValue, index) =>
          makeToolDataRow({ threadId, toolCallId: "c", itemId: `i${index}`, value: itemValue }),
        );
        const events: ThreadEvent[] = [
          { type: "thread-updated", thread },
          { type: "message-upserted", message },
          { type: "run-upserted", run },
          { type: "action-upserted", action },
          ...items.map((item): ThreadEvent => ({ type: "tool-data-upserted", item })),
        ];
        await commitOk(threadId, 0, events, at(1));
        expect(await load(threadId)).toEqual({
          thread: { ...thread, version: 1, updatedAt: at(1) },
          messages: [message],
          runs: [run],
          actions: [action],
          toolData: items,
        });
        expect((await storage().readEvents({ threadId, afterVersion: 0 }))[0].events).toEqual(events);
        expect(await storage().getAction({ threadId, actionId: action.actionId })).toEqual(action);
      });
    });

    group("write-cost", () => {
      it("commits a small change to a thread with 200 messages without touching the other rows", async () => {
        const threadId = id("t");
        const thread = makeThreadRow({ threadId, scopeKey: id("s") });
        const messages: MessageRow[] = Array.from({ length: 200 }, (_, index) =>
          makeMessageRow({
            threadId,
            messageId: `m${index}-${threadId}`,
            position: index + 1,
            role: index % 2 === 0 ? "user" : "assistant",
            text: `message ${index} `.repeat(20),
            createdAt: at(index),
            updatedAt: at(index),
          }),
        );
        await createThread(thread, [], at(0));
        let version = 1;
        for (let start = 0; start < messages.length; start += 50) {
          const chunk = messages.slice(start, start + 50);
          version = await commitOk(
            threadId,
            version,
            chunk.map((message) => ({ type: "message-upserted", message })),
            at(start + 50),
          );
        }
        const before = await load(threadId);
        expect(before.messages).toEqual(messages);

        const item = makeToolDataRow({ threadId, toolCallId: "c", itemId: "progress", value: 0.5 });
        version = await commitOk(threadId, version, [{ type: "tool-data-upserted", item }], at(500));
        const after = await load(threadId);
        expect(after.messages).toEqual(before.messages);
        expect(after.runs).toEqual(before.runs);
        expect(after.toolData).toEqual([item]);
        expect(after.thread).toEqual({ ...before.thread, version, updatedAt: at(500) });
        expect(await storage().readEvents({ threadId, afterVersion: version - 1 })).toEqual([
          { threadId, version, events: [{ type: "tool-data-upserted", item }], createdAt: at(500) },
        ]);
      });
    });
  });

  async function recoverableOf(threadId: string, now: number) {
    const all = await storage().listRecoverableRuns({ now: at(now), limit: 10_000 });
    return all.filter((entry) => entry.threadId === threadId);
  }
}

/** A fixed ISO timestamp `seconds` after 2026-01-01T00:00:00Z; the suite never reads a clock. */
function at(seconds: number): string {
  return new Date(Date.UTC(2026, 0, 1) + seconds * 1000).toISOString();
}

function withText(message: MessageRow["message"], text: string): MessageRow["message"] {
  return { ...message, parts: [{ type: "text", text }] };
}

/** Rebuilds a snapshot from a thread's whole log, starting from its first thread-updated event. */
function replay(batches: StoredThreadEvents[]): ThreadSnapshot {
  const created = batches[0]?.events.find((event) => event.type === "thread-updated");
  if (!created) throw new Error("expected the first batch to contain a thread-updated event");
  let snapshot: ThreadSnapshot = {
    thread: { ...created.thread, version: 0 },
    messages: [],
    runs: [],
    actions: [],
    toolData: [],
  };
  for (const batch of batches) snapshot = applyStoredEvents(snapshot, batch);
  return snapshot;
}

function expectOneWinner(results: StorageCommitResult[]) {
  expect(results.filter((result) => result.ok)).toHaveLength(1);
  for (const result of results) {
    if (!result.ok) expect(result.reason).toBe("conflict");
  }
}

function byNewest(a: ThreadRow, b: ThreadRow): number {
  const time = Date.parse(b.updatedAt) - Date.parse(a.updatedAt);
  if (time !== 0) return time;
  return a.threadId < b.threadId ? -1 : a.threadId > b.threadId ? 1 : 0;
}

function sortByRunId<T extends { runId: string }>(entries: T[]): T[] {
  return [...entries].sort((a, b) => (a.runId < b.runId ? -1 : a.runId > b.runId ? 1 : 0));
}

/** Follows `nextCursor` until it is null; fails instead of looping forever. */
async function collectPages<TKey extends string, TItem>(
  fetchPage: (cursor: string | null) => Promise<{ [K in TKey]: TItem[] } & { nextCursor: string | null }>,
  key: TKey,
): Promise<TItem[][]> {
  const pages: TItem[][] = [];
  let cursor: string | null = null;
  do {
    const page = await fetchPage(cursor);
    pages.push(page[key]);
    cursor = page.nextCursor;
    if (pages.length > 100) throw new Error("pagination did not end after 100 pages");
  } while (cursor !== null);
  return pages;
}

/** Strings that trip up encodings: astral emoji, combining marks, RTL, escapes, quotes. */
const tricky = 'emoji 👩‍👩‍👧 e\u0301 עברית 漢字 "quoted" \\back\\slash\nnew line\ttab \u2028 </script>';

function jsonSample(): JsonObject {
  const numbers: JsonValue[] = [0, 1, -1, Math.PI, 1e-7, 2 ** 53 - 1, -(2 ** 53 - 1), 1.5e300, 0.1];
  return {
    text: tricky,
    "ключ with spaces.and.dots": "ok",
    "🔑": { nested: { deeper: { deepest: [1, [2, [3, [4, { five: 5 }]]]] } } },
    numbers,
    nulls: [null, { inner: null }],
    booleans: [true, false],
    empty: { string: "", array: [], object: {} },
  };
}
