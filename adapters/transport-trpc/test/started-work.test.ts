import { defineAgent, defineTool, type StorageV1 } from "@pai/core";
import { createTestRuntime, scriptedModel } from "@pai/core/testing";
import { memoryStorage } from "@pai/storage-memory";
import { initTRPC } from "@trpc/server";
import { afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { createPaiRouter } from "../src/index.js";

// Over HTTP the response to a mutation is built on the same thread as the run the mutation
// started. These check that the run gets to its next durable write before the answer returns.

const approve = defineTool({
  id: "test.started-work.approve.v1",
  description: "Ask before shipping",
  inputSchema: z.object({}),
  outputSchema: z.object({ approved: z.boolean() }),
  suspend: {
    approval: { suspendSchema: z.object({}), resumeSchema: z.object({ approved: z.boolean() }) },
  },
  execute: async (ctx) => {
    if (ctx.entry.type === "resume") return ctx.entry.resume as { approved: boolean };
    return ctx.suspend("approval", {});
  },
});
const agent = defineAgent({ name: "main", tools: { approve } });

/** Memory storage whose commits wait one turn, as a database round trip does, and are counted when sent. */
function slowStorage() {
  const inner = memoryStorage();
  const sent = { commits: 0 };
  const storage: StorageV1 = new Proxy(inner, {
    get(target, key, receiver) {
      if (key !== "commit") return Reflect.get(target, key, receiver);
      return async (input: Parameters<StorageV1["commit"]>[0]) => {
        sent.commits++;
        await new Promise((resolve) => setImmediate(resolve));
        return target.commit(input);
      };
    },
  });
  return { storage, sent };
}

const closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  await Promise.all(closers.splice(0).map((close) => close()));
});

async function start() {
  const { storage, sent } = slowStorage();
  const runtime = await createTestRuntime({
    storage,
    agent,
    model: scriptedModel((call) =>
      call.prompt.at(-1)?.role === "tool"
        ? { text: ["Shipped."] }
        : { toolCalls: [{ toolName: "approve", input: {} }] },
    ),
    scope: () => ({ scopeKey: "acme", userKey: "alice" }),
  });
  closers.push(() => runtime.close());
  const t = initTRPC.create();
  const router = t.router({
    pai: createPaiRouter({ procedure: t.procedure, service: runtime.pai.service, identity: () => ({}) }),
  });
  return { caller: t.createCallerFactory(router)({}), runtime, sent };
}

describe("mutations that set work in motion", () => {
  it("threads.send answers after the run it started has sent its first commit", async () => {
    const { caller, runtime, sent } = await start();
    const { threadId } = await caller.pai.threads.create({});
    const before = sent.commits;
    await caller.pai.threads.send({ threadId, message: { text: "ship?" } });
    // The message's own commit, then the run's step with the tool call.
    expect(sent.commits - before).toBeGreaterThanOrEqual(2);
    await runtime.pai.waitForIdle(threadId);
  });

  it.each(["cancel", "fail"] as const)(
    "actions.%s answers after the run has sent the call's outcome to storage",
    async (how) => {
      const { caller, runtime, sent } = await start();
      const { threadId } = await caller.pai.threads.create({});
      await caller.pai.threads.send({ threadId, message: { text: "ship?" } });
      await runtime.pai.waitForIdle(threadId);
      const action = (await caller.pai.threads.get({ threadId })).pending[0];
      if (!action) throw new Error("expected a pending action");
      const before = sent.commits;
      if (how === "cancel") await caller.pai.actions.cancel({ threadId, actionId: action.ref.actionId });
      else
        await caller.pai.actions.fail({ threadId, actionId: action.ref.actionId, error: { message: "no" } });
      expect(sent.commits - before).toBeGreaterThanOrEqual(2);
      await runtime.pai.waitForIdle(threadId);
      expect((await caller.pai.threads.get({ threadId })).pending).toEqual([]);
    },
  );

  it("actions.submit answers after the resumed tool's result has been sent to storage", async () => {
    const { caller, runtime, sent } = await start();
    const { threadId } = await caller.pai.threads.create({});
    await caller.pai.threads.send({ threadId, message: { text: "ship?" } });
    await runtime.pai.waitForIdle(threadId);
    const view = await caller.pai.threads.get({ threadId });
    const action = view.pending[0];
    if (!action) throw new Error("expected a pending action");
    const before = sent.commits;
    await caller.pai.actions.submit({
      threadId,
      actionId: action.ref.actionId,
      name: "approve.approval",
      payload: { approved: true },
    });
    expect(sent.commits - before).toBeGreaterThanOrEqual(2);
    await runtime.pai.waitForIdle(threadId);
    const done = await caller.pai.threads.get({ threadId });
    expect(done.pending).toEqual([]);
  });
});
