import { internalsOf } from "@pai/core/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type EngineName,
  openEngine,
  type TestEngine,
} from "../../../storage-kysely/test/support/engines.js";
import { alice, createFixture, type Fixture } from "./fixture.js";
import { queryReq, send } from "./raw-http.js";

/**
 * Rows written before PAI bounded its input (or by another tool writing the tables) may hold
 * JSON no client request could send today: nested thousands deep, or with a `__proto__` key.
 * Such a row must never make a read fail, least of all `threads.list`, which would lock a whole
 * scope out of its threads.
 */

const ENGINES = ["postgres", "mysql"] as const satisfies readonly EngineName[];

function nested(depth: number): unknown {
  let value: unknown = "bottom";
  for (let index = 0; index < depth; index++) value = { a: value };
  return value;
}

describe.each(ENGINES)("stored rows beyond today's bounds on %s", (name) => {
  let engine: TestEngine | { skip: string };
  let fixture: Fixture | undefined;

  beforeAll(async () => {
    engine = await openEngine(name, `stored_rows_${name === "postgres" ? "pg" : "my"}`);
    if ("skip" in engine) return;
    fixture = await createFixture(engine);
  });
  afterAll(async () => {
    await fixture?.close();
    if (engine && !("skip" in engine)) await engine.dispose();
  });

  it("list and get still answer for the whole scope", async (context) => {
    if (!fixture) return context.skip((engine as { skip: string }).skip);
    const { pai, host } = fixture;
    const storage = internalsOf(pai).store.storage;
    const threadId = `legacy-${name}`;
    const now = new Date().toISOString();
    const metadata = { deep: nested(2_000), ...JSON.parse('{"__proto__":{"polluted":true}}') };
    // Written straight through the storage port, as an old server or a migration could have.
    const committed = await storage.commit({
      threadId,
      expectedVersion: 0,
      now,
      events: [
        {
          type: "thread-updated",
          thread: {
            threadId,
            scopeKey: alice.scopeKey,
            userKey: alice.userId,
            agentId: "main",
            title: "legacy",
            status: "idle",
            version: 0,
            activeRunId: null,
            metadata: metadata as never,
            createdAt: now,
            updatedAt: now,
          },
        },
      ],
    });
    expect(committed.ok).toBe(true);

    const listed = await send(host.url, alice, queryReq("pai.threads.list", {}));
    expect(listed.status, listed.message).toBe(200);
    const threads = (listed.data as { items: Array<{ threadId: string; metadata: unknown }> }).items;
    expect(threads.map((thread) => thread.threadId)).toContain(threadId);
    expect(threads.map((thread) => thread.threadId)).toContain(fixture.a.threadId);

    const got = await send(host.url, alice, queryReq("pai.threads.get", { threadId }));
    expect(got.status, got.message).toBe(200);
    const other = await send(host.url, alice, queryReq("pai.threads.get", { threadId: fixture.a.threadId }));
    expect(other.status, other.message).toBe(200);
  });
});
