// Proves the commit/load round trip: a thread is created at version 1, every commit sets
// version and updatedAt, and loadThread equals a replay of the committed log.
import { expect, it } from "vitest";
import { makeActionRow, makeMessageRow, makeRunRow, makeThreadRow, makeToolDataRow } from "../rows.js";
import type { ConformanceContext } from "./context.js";
import { at, replay, withText } from "./helpers.js";

export function basicsTests(ctx: ConformanceContext): void {
  const { storage, id, commit, commitOk, createThread, load } = ctx;
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
}
