import { defineAgent, defineTool, type StorageV1 } from "@pai/core";
import { createTestRuntime } from "@pai/core/testing";
import { memoryStorage } from "@pai/storage-memory";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { scripted } from "./_helpers.js";

const add = defineTool({
  id: "test.add.v1",
  description: "Add two numbers",
  inputSchema: z.object({ a: z.number(), b: z.number() }),
  outputSchema: z.number(),
  execute: ({ input }) => input.a + input.b,
});

/** Memory storage that counts whole-thread reads, event-log reads and lease calls. */
function countingReads(inner: StorageV1) {
  const counts = { loadThread: 0, readEvents: 0, acquireRunLease: 0, releaseRunLease: 0 };
  const storage: StorageV1 = {
    ...inner,
    acquireRunLease: (input) => {
      counts.acquireRunLease++;
      return inner.acquireRunLease(input);
    },
    releaseRunLease: (input) => {
      counts.releaseRunLease++;
      return inner.releaseRunLease(input);
    },
    loadThread: (input) => {
      counts.loadThread++;
      return inner.loadThread(input);
    },
    readEvents: (input) => {
      counts.readEvents++;
      return inner.readEvents(input);
    },
  };
  return { storage, counts };
}

const approve = defineTool({
  id: "test.approve.v1",
  description: "Ask for approval",
  inputSchema: z.object({}),
  outputSchema: z.object({ ok: z.boolean() }),
  suspend: { approval: { suspendSchema: z.object({}), resumeSchema: z.object({ ok: z.boolean() }) } },
  execute: (ctx: any) => (ctx.entry.type === "initial" ? ctx.suspend("approval", {}) : ctx.entry.resume),
});

describe("storage traffic", () => {
  it("a parked run releases its lease; a submit takes it once and the finished run needs no release", async () => {
    const { storage, counts } = countingReads(memoryStorage());
    const t = await createTestRuntime({
      agent: defineAgent({ tools: { approve } }),
      storage,
      model: [{ toolCalls: [{ toolName: "approve", input: {} }] }, { text: "done" }],
    });
    const threadId = await t.createThread();
    const waiting = await t.send(threadId, "ship?");
    expect(waiting.runs.at(-1)?.status).toBe("waiting");
    // Released at once, so another server can resume the run without waiting for expiry.
    expect(counts).toMatchObject({ acquireRunLease: 1, releaseRunLease: 1 });
    counts.acquireRunLease = 0;
    counts.releaseRunLease = 0;
    const done = await t.submit(threadId, "approve.approval", { ok: true });
    expect(done.runs.at(-1)?.status).toBe("completed");
    // The re-entered tool hands the lease to the driver; a completed run is never adopted.
    expect(counts).toMatchObject({ acquireRunLease: 1, releaseRunLease: 0 });
    await t.close();
  });
});

describe("thread snapshots between turns", () => {
  it("the next turn on a thread this process just ran reads only what changed since", async () => {
    const { storage, counts } = countingReads(memoryStorage());
    const t = await createTestRuntime({
      agent: defineAgent({ tools: { add } }),
      storage,
      model: [{ toolCalls: [{ toolName: "add", input: { a: 1, b: 2 } }] }, { text: "3" }, { text: "again" }],
    });
    const threadId = await t.createThread();
    await t.send(threadId, "1+2?");
    counts.loadThread = 0;
    counts.readEvents = 0;
    const second = await t.send(threadId, "and now?");
    expect(second.runs.at(-1)?.status).toBe("completed");
    expect(counts.loadThread).toBe(0);
    expect(counts.readEvents).toBeGreaterThan(0);
    // The model saw the whole history in order, exactly as a fresh read would give it.
    const prompt = scripted(t)
      .calls.at(-1)!
      .prompt.map((message) => message.role);
    expect(prompt).toEqual(["user", "assistant", "tool", "assistant", "user"]);
    expect(await storage.loadThread({ threadId })).toEqual(await t.snapshot(threadId));
    await t.close();
  });

  it("a change committed by another server is seen on the next read", async () => {
    const shared = memoryStorage();
    const agent = defineAgent({ tools: { add } });
    const first = await createTestRuntime({ agent, storage: shared, model: [{ text: "one" }] });
    const second = await createTestRuntime({ agent, storage: shared, model: [{ text: "two" }] });
    const threadId = await first.createThread();
    await first.send(threadId, "hello");
    await second.send(threadId, "hello from elsewhere");
    const seen = await first.pai.service.threads.get({ identity: first.identity, threadId });
    const fresh = await second.pai.service.threads.get({ identity: second.identity, threadId });
    expect(seen).toEqual(fresh);
    expect(seen.thread.version).toBe((await shared.loadThread({ threadId }))!.thread.version);
    await first.close();
    await second.close();
  });

  it("a parked thread is not kept", async () => {
    const t = await createTestRuntime({
      agent: defineAgent({ tools: { approve } }),
      model: [{ toolCalls: [{ toolName: "approve", input: {} }] }],
    });
    const parked = await t.send(await t.createThread(), "ship?");
    expect(parked.runs.at(-1)?.status).toBe("waiting");
    expect(t.pai.engine.store.cachedThreads).toBe(0);
    expect(t.pai.engine.store.recentThreads).toBe(0);
    await t.close();
  });

  it("idle threads kept between turns are bounded", async () => {
    const t = await createTestRuntime({
      agent: defineAgent({ tools: { add } }),
      model: Array.from({ length: 80 }, () => ({ text: "ok" })),
    });
    for (let index = 0; index < 70; index++) await t.send(await t.createThread(), "hi");
    expect(t.pai.engine.store.cachedThreads).toBe(0);
    expect(t.pai.engine.store.recentThreads).toBe(64);
    await t.close();
  });
});
