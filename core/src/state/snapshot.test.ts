import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { MessageRow, ThreadRow } from "./rows.js";
import { applyThreadEvent, applyThreadEvents, sharedMessagePrefix, type ThreadSnapshot } from "./snapshot.js";

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

  it("projects a batch once per base: the same batch from the same snapshot gives the same snapshot back", () => {
    const events = batch();
    const first = applyThreadEvents(empty, events);
    expect(first.messages.map((row) => row.messageId)).toEqual(["a", "b"]);
    expect(applyThreadEvents(empty, events)).toBe(first);
    // From another base, the batch is applied again.
    const other = applyThreadEvent(empty, { type: "message-upserted", message: message("z", 0) });
    expect(applyThreadEvents(other, events).messages.map((row) => row.messageId)).toEqual(["z", "a", "b"]);
  });

  it("applies a batch again when it grew after its projection", () => {
    const events: Parameters<typeof applyThreadEvents>[1][number][] = batch();
    applyThreadEvents(empty, events);
    events.push({ type: "message-upserted", message: message("c", 3) });
    expect(applyThreadEvents(empty, events).messages.map((row) => row.messageId)).toEqual(["a", "b", "c"]);
  });

  it("gives what applying each event in turn gives", () => {
    const events = batch();
    expect(applyThreadEvents(empty, events)).toEqual(events.reduce(applyThreadEvent, empty));
  });
});

describe("sharedMessagePrefix", () => {
  /** The true length of the run of identical rows both lists start with. */
  const commonStart = (a: readonly unknown[], b: readonly unknown[]) => {
    let index = 0;
    while (index < a.length && index < b.length && a[index] === b[index]) index++;
    return index;
  };

  it("tells how many leading rows a list made by upserts shares with any list it came from", () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.record({ id: fc.integer({ min: 0, max: 9 }), position: fc.integer({ min: 0, max: 9 }) }),
          {
            minLength: 20,
            maxLength: 40,
          },
        ),
        (writes) => {
          const lists: MessageRow[][] = [empty.messages];
          let snapshot = empty;
          writes.forEach(({ id, position }, index) => {
            snapshot = applyThreadEvent(snapshot, {
              type: "message-upserted",
              message: message(`m${id}`, position, `v${index}`),
            });
            lists.push(snapshot.messages);
          });
          const newest = lists.at(-1)!;
          lists.forEach((earlier, index) => {
            const hops = lists.length - 1 - index;
            const known = sharedMessagePrefix(newest, earlier);
            if (hops > 32) expect(known).toBeUndefined();
            // Never more than the lists share (a prefix it reports is one), and exact for one upsert.
            else if (hops <= 1) expect(known).toBe(commonStart(newest, earlier));
            else expect(known).toBeLessThanOrEqual(commonStart(newest, earlier));
          });
        },
      ),
    );
  });

  it("knows nothing of lists it did not make", () => {
    const one = [message("a", 1)];
    expect(sharedMessagePrefix(one, [...one])).toBeUndefined();
    expect(sharedMessagePrefix(one, one)).toBe(1);
    const grown = applyThreadEvent(
      { ...empty, messages: one },
      { type: "message-upserted", message: message("b", 2) },
    );
    expect(sharedMessagePrefix(grown.messages, one)).toBe(1);
    // Replacing the first row keeps nothing; inserting before the last keeps what precedes it.
    const replaced = applyThreadEvent(grown, { type: "message-upserted", message: message("a", 1, "again") });
    expect(sharedMessagePrefix(replaced.messages, grown.messages)).toBe(0);
    const inserted = applyThreadEvent(grown, { type: "message-upserted", message: message("c", 1.5) });
    expect(inserted.messages.map((row) => row.messageId)).toEqual(["a", "c", "b"]);
    expect(sharedMessagePrefix(inserted.messages, grown.messages)).toBe(1);
  });

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
