import { createPai, defineAgent } from "@pai/core";
import { scriptedModel } from "@pai/core/testing";
import { memoryStorage } from "@pai/storage-memory";
import { describe, expect, it } from "vitest";
import { rejection } from "./_helpers.js";

type User = { scopeKey: string; userKey?: string };

function setup(maxWatchesPerUser?: number) {
  return createPai({
    agents: { main: defineAgent({ tools: {} }) },
    storage: memoryStorage(),
    model: scriptedModel([]),
    scope: (identity: User) => identity,
    ...(maxWatchesPerUser === undefined ? {} : { maxWatchesPerUser }),
  });
}

/** Opens a watch and waits for its first event, so it holds its slot until `close()`. */
async function openWatch(pai: ReturnType<typeof setup>, identity: User, threadId: string) {
  const iterator = pai.service.threads.watch({ identity, threadId })[Symbol.asyncIterator]();
  const first = await iterator.next();
  expect(first.done).toBe(false);
  return { close: async () => void (await iterator.return?.()) };
}

describe("maxWatchesPerUser", () => {
  const ana: User = { scopeKey: "acme", userKey: "ana" };
  const bob: User = { scopeKey: "acme", userKey: "bob" };

  it("refuses one watch more than the bound with TOO_MANY_REQUESTS, per user, until one closes", async () => {
    const pai = setup(2);
    const { threadId } = await pai.service.threads.create({ identity: ana });
    const first = await openWatch(pai, ana, threadId);
    const second = await openWatch(pai, ana, threadId);

    const refused = await rejection(
      pai.service.threads.watch({ identity: ana, threadId })[Symbol.asyncIterator]().next(),
    );
    expect(refused.code).toBe("TOO_MANY_REQUESTS");
    expect(refused.message).toContain("maxWatchesPerUser");

    // Another user of the same scope has slots of their own.
    const bobs = await openWatch(pai, bob, threadId);
    await first.close();
    const third = await openWatch(pai, ana, threadId);
    await Promise.all([second.close(), third.close(), bobs.close()]);
    await pai.close();
  });

  it("gives the slot back when a watch ends by its signal, or fails on a thread it may not read", async () => {
    const pai = setup(1);
    const { threadId } = await pai.service.threads.create({ identity: ana });
    const controller = new AbortController();
    const watching = (async () => {
      for await (const _event of pai.service.threads.watch({
        identity: ana,
        threadId,
        signal: controller.signal,
      })) {
        controller.abort();
      }
    })();
    await watching;
    const missing = await rejection(
      pai.service.threads.watch({ identity: ana, threadId: "no-such-thread" })[Symbol.asyncIterator]().next(),
    );
    expect(missing.code).toBe("NOT_FOUND");
    const other = await rejection(
      pai.service.threads
        .watch({ identity: { scopeKey: "other", userKey: "ana" }, threadId })
        [Symbol.asyncIterator]()
        .next(),
    );
    expect(other.code).toBe("NOT_FOUND");
    const again = await openWatch(pai, ana, threadId);
    await again.close();
    await pai.close();
  });

  it("a call that waits (waitMs) holds a slot too, taken before it writes anything", async () => {
    const pai = setup(1);
    const { threadId } = await pai.service.threads.create({ identity: ana });
    const held = await openWatch(pai, ana, threadId);
    const refused = await rejection(
      pai.service.threads.send({ identity: ana, threadId, message: { text: "hi" }, waitMs: 1_000 }),
    );
    expect(refused.code).toBe("TOO_MANY_REQUESTS");
    const created = await rejection(
      pai.service.threads.create({ identity: ana, message: { text: "hi" }, waitMs: 1_000 }),
    );
    expect(created.code).toBe("TOO_MANY_REQUESTS");
    // Nothing was written: no message on the thread, no second thread.
    expect((await pai.service.threads.get({ identity: ana, threadId })).messages).toEqual([]);
    expect((await pai.service.threads.list({ identity: ana })).items).toHaveLength(1);
    await held.close();
    await pai.close();
  });

  it("defaults to 32 and refuses a bound that is not a whole number of at least 1", async () => {
    const pai = setup();
    const { threadId } = await pai.service.threads.create({ identity: ana });
    const open = await Promise.all(Array.from({ length: 32 }, () => openWatch(pai, ana, threadId)));
    const refused = await rejection(
      pai.service.threads.watch({ identity: ana, threadId })[Symbol.asyncIterator]().next(),
    );
    expect(refused.code).toBe("TOO_MANY_REQUESTS");
    await Promise.all(open.map((watch) => watch.close()));
    await pai.close();
    for (const bad of [0, -1, 1.5, Number.NaN]) {
      expect(() => setup(bad), String(bad)).toThrow(/maxWatchesPerUser/);
    }
    const unbounded = setup(Number.POSITIVE_INFINITY);
    await unbounded.close();
  });
});
