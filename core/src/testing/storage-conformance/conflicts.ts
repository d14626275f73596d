// Proves optimistic concurrency: a stale or unknown expectedVersion writes nothing and reports
// the current version, and exactly one of concurrent commits at the same version wins.
import { expect, it } from "vitest";
import { makeMessageRow, makeThreadRow } from "../rows.js";
import type { ConformanceContext } from "./context.js";
import { at, expectOneWinner } from "./helpers.js";

export function conflictsTests(ctx: ConformanceContext): void {
  const { storage, id, commit, commitOk, createThread, load } = ctx;
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
    expect(await storage().readEvents({ threadId: thread.threadId, afterVersion: 0 })).toEqual(eventsBefore);
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
      contenders.map((message) => commit(thread.threadId, 1, [{ type: "message-upserted", message }], at(2))),
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
}
