// Proves listThreads: scoped (and optionally per agent), newest first with threadId breaking
// ties, and paged by an opaque cursor without duplicates or gaps.
import { expect, it } from "vitest";
import type { ThreadRow } from "../../state/rows.js";
import { makeThreadRow } from "../rows.js";
import type { ConformanceContext } from "./context.js";
import { at, byNewest, collectPages } from "./helpers.js";

export function threadsTests(ctx: ConformanceContext): void {
  const { storage, id, commitOk, createThread } = ctx;
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
    expect((await storage().listThreads({ scopeKey: scopeB, limit: 10 })).threads).toEqual([stored(b1, 3)]);
    expect((await storage().listThreads({ scopeKey: scopeB, agentId: "y", limit: 10 })).threads).toEqual([]);
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
}
