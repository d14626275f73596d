// Proves the event log: one batch per committed version, holding the commit's events in order,
// read back ascending after a version with an optional limit that pages cleanly.
import { expect, it } from "vitest";
import type { StoredThreadEvents, ThreadEvent } from "../../state/events.js";
import { makeActionRow, makeMessageRow, makeRunRow, makeThreadRow, makeToolDataRow } from "../rows.js";
import type { ConformanceContext } from "./context.js";
import { at } from "./helpers.js";

export function eventsTests(ctx: ConformanceContext): void {
  const { storage, id, commitOk, createThread } = ctx;
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
    expect(await storage().readEvents({ threadId, afterVersion: 2, limit: 2 })).toEqual(expected.slice(2, 4));
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
}
