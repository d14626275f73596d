import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { MessageRow, ThreadRow } from "./rows.js";
import { applyThreadEvent, applyThreadEvents, type ThreadSnapshot } from "./snapshot.js";

const NOW = "2026-01-01T00:00:00.000Z";

const thread: ThreadRow = {
  threadId: "t",
  scopeKey: "s",
  agentId: "a",
  title: null,
  metadata: {},
  status: "idle",
  version: 1,
  createdAt: NOW,
  updatedAt: NOW,
} as ThreadRow;

const message = (messageId: string, position: number, text = messageId): MessageRow =>
  ({
    threadId: "t",
    messageId,
    position,
    role: "user",
    message: { id: messageId, role: "user", parts: [{ type: "text", text }] },
    runId: null,
    createdAt: NOW,
    updatedAt: NOW,
  }) as MessageRow;

const empty: ThreadSnapshot = { thread, messages: [], runs: [], actions: [], toolData: [] };

describe("applyThreadEvent on messages", () => {
  it("keeps messages in position order, as a stable sort after each upsert would", () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.record({ id: fc.integer({ min: 0, max: 12 }), position: fc.integer({ min: 0, max: 6 }) }),
          {
            maxLength: 40,
          },
        ),
        (writes) => {
          let fast = empty;
          let expected: MessageRow[] = [];
          writes.forEach(({ id }, index) => {
            const row = message(`m${id}`, (id * 5) % 7, `v${index}`);
            fast = applyThreadEvent(fast, { type: "message-upserted", message: row });
            // The reference: replace in place when the id exists, else append and stable-sort.
            const at = expected.findIndex((existing) => existing.messageId === row.messageId);
            if (at !== -1) expected = expected.map((existing, i) => (i === at ? row : existing));
            else expected = [...expected, row].sort((a, b) => a.position - b.position);
          });
          expect(fast.messages).toEqual(expected);
        },
      ),
    );
  });

  it("never changes the snapshot it was given", () => {
    const start = applyThreadEvent(empty, { type: "message-upserted", message: message("a", 2) });
    const before = start.messages;
    applyThreadEvent(start, { type: "message-upserted", message: message("b", 1) });
    applyThreadEvent(start, { type: "message-upserted", message: message("a", 2, "changed") });
    expect(start.messages).toBe(before);
    expect(before.map((row) => row.messageId)).toEqual(["a"]);
  });
});

describe("applyThreadEvents", () => {
  const batch = () => [
    { type: "message-upserted" as const, message: message("a", 1) },
    { type: "message-upserted" as const, message: message("b", 2) },
  ];

  it("applies a batch to any base", () => {
    const events = batch();
    expect(applyThreadEvents(empty, events).messages.map((row) => row.messageId)).toEqual(["a", "b"]);
    const other = applyThreadEvent(empty, { type: "message-upserted", message: message("z", 0) });
    expect(applyThreadEvents(other, events).messages.map((row) => row.messageId)).toEqual(["z", "a", "b"]);
  });

  it("gives what applying each event in turn gives", () => {
    const events = batch();
    expect(applyThreadEvents(empty, events)).toEqual(events.reduce(applyThreadEvent, empty));
  });
});

describe("message lists", () => {
  it("does not keep the earlier lists of a thread alive", async () => {
    // `gc` even when node was started without `--expose-gc`.
    setFlagsFromString("--expose-gc");
    const gc = runInNewContext("gc") as () => void;
    let snapshot = empty;
    const earlier: WeakRef<MessageRow[]>[] = [];
    for (let index = 0; index < 20; index++) {
      snapshot = applyThreadEvent(snapshot, {
        type: "message-upserted",
        message: message(`m${index}`, index),
      });
      earlier.push(new WeakRef(snapshot.messages));
    }
    // A weak reference holds its target until the current job ends.
    await new Promise((resolve) => setTimeout(resolve, 0));
    gc();
    expect(earlier.slice(0, -1).filter((ref) => ref.deref() !== undefined)).toEqual([]);
    expect(earlier.at(-1)!.deref()).toBe(snapshot.messages);
  });
});
