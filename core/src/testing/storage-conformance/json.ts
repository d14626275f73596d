// Proves JSON values survive every column and the event log exactly: unicode, deep nesting,
// extreme numbers, nulls and empty containers.
import { expect, it } from "vitest";
import type { ThreadEvent } from "../../state/events.js";
import type { ToolDataRow } from "../../state/rows.js";
import { makeActionRow, makeMessageRow, makeRunRow, makeThreadRow, makeToolDataRow } from "../rows.js";
import type { ConformanceContext } from "./context.js";
import { at, jsonSample, tricky } from "./helpers.js";

export function jsonTests(ctx: ConformanceContext): void {
  const { storage, id, commitOk, load } = ctx;
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
}
