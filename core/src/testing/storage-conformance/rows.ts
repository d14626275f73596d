// Proves each row table upserts in place by its key and keeps its order, and that storage holds
// copies: mutating objects passed in or handed out never changes what is stored.
import { expect, it } from "vitest";
import type { ThreadEvent } from "../../state/events.js";
import type { ActionRow } from "../../state/rows.js";
import { makeActionRow, makeMessageRow, makeRunRow, makeThreadRow, makeToolDataRow } from "../rows.js";
import type { ConformanceContext } from "./context.js";
import { at, withText } from "./helpers.js";

export function rowsTests(ctx: ConformanceContext): void {
  const { storage, id, commitOk, createThread, load } = ctx;
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
    expect(await storage().getAction({ threadId, actionId: action.actionId })).toEqual(expected.actions[0]);
    expect((await storage().listThreads({ scopeKey, limit: 10 })).threads).toEqual([expected.thread]);
  });
}
