// Proves a commit writes only the rows its events name: a small change to a large thread leaves
// every other row and the earlier log untouched.
import { expect, it } from "vitest";
import type { MessageRow } from "../../state/rows.js";
import { makeMessageRow, makeThreadRow, makeToolDataRow } from "../rows.js";
import type { ConformanceContext } from "./context.js";
import { at } from "./helpers.js";

export function writeCostTests(ctx: ConformanceContext): void {
  const { storage, id, commitOk, createThread, load } = ctx;
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
}
