// Proves getAction is keyed by (threadId, actionId) and listActions is scoped, oldest first,
// filterable by state and paged without gaps.
import { expect, it } from "vitest";
import type { ThreadEvent } from "../../state/events.js";
import { makeActionRow, makeThreadRow } from "../rows.js";
import type { ConformanceContext } from "./context.js";
import { at, collectPages } from "./helpers.js";

export function actionsTests(ctx: ConformanceContext): void {
  const { storage, id, createThread } = ctx;
  it("gets an action by (threadId, actionId)", async () => {
    const scopeKey = id("s");
    const actionId = id("a");
    const first = makeActionRow({ threadId: id("t"), actionId, scopeKey, input: "first" });
    const second = makeActionRow({ threadId: id("t"), actionId, scopeKey, input: "second" });
    await createThread(makeThreadRow({ threadId: first.threadId, scopeKey }), [
      { type: "action-upserted", action: first },
    ]);
    await createThread(makeThreadRow({ threadId: second.threadId, scopeKey }), [
      { type: "action-upserted", action: second },
    ]);
    expect(await storage().getAction({ threadId: first.threadId, actionId })).toEqual(first);
    expect(await storage().getAction({ threadId: second.threadId, actionId })).toEqual(second);
    expect(await storage().getAction({ threadId: first.threadId, actionId: id("a") })).toBeNull();
    expect(await storage().getAction({ threadId: id("t"), actionId })).toBeNull();
  });

  it("lists actions of a scope, oldest first, by state, with pagination; other scopes stay invisible", async () => {
    const scopeKey = id("s");
    const otherScope = id("s");
    const t1 = id("t");
    const t2 = id("t");
    const states = ["pending", "submitted", "pending", "cancelled", "pending", "failed", "pending"] as const;
    const actions = states.map((state, index) =>
      makeActionRow({
        threadId: index % 2 === 0 ? t1 : t2,
        actionId: id("a"),
        scopeKey,
        state,
        createdAt: at(10 + index),
        resolvedAt: state === "pending" ? null : at(20),
      }),
    );
    const foreign = makeActionRow({
      threadId: id("t"),
      actionId: id("a"),
      scopeKey: otherScope,
      createdAt: at(1),
    });
    const eventsOf = (threadId: string): ThreadEvent[] =>
      actions
        .filter((action) => action.threadId === threadId)
        .map((action) => ({ type: "action-upserted", action }));
    await createThread(makeThreadRow({ threadId: t1, scopeKey }), eventsOf(t1));
    await createThread(makeThreadRow({ threadId: t2, scopeKey }), eventsOf(t2));
    await createThread(makeThreadRow({ threadId: foreign.threadId, scopeKey: otherScope }), [
      { type: "action-upserted", action: foreign },
    ]);

    expect(await storage().listActions({ scopeKey, limit: 100 })).toEqual({ actions, nextCursor: null });
    const pending = actions.filter((action) => action.state === "pending");
    expect((await storage().listActions({ scopeKey, state: "pending", limit: 100 })).actions).toEqual(
      pending,
    );
    expect((await storage().listActions({ scopeKey, state: "failed", limit: 100 })).actions).toEqual([
      actions[5],
    ]);

    const pages = await collectPages(
      (cursor) => storage().listActions({ scopeKey, limit: 2, cursor }),
      "actions",
    );
    expect(pages.length).toBeGreaterThanOrEqual(4);
    for (const page of pages) expect(page.length).toBeLessThanOrEqual(2);
    expect(pages.flat()).toEqual(actions);
    const pendingPages = await collectPages(
      (cursor) => storage().listActions({ scopeKey, state: "pending", limit: 3, cursor }),
      "actions",
    );
    expect(pendingPages.flat()).toEqual(pending);

    expect((await storage().listActions({ scopeKey: otherScope, limit: 100 })).actions).toEqual([foreign]);
    expect((await storage().listActions({ scopeKey: id("s"), limit: 100 })).actions).toEqual([]);
  });
}
