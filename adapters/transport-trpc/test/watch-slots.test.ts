import { defineAgent, defineTool, PaiError } from "@pai/core";
import { isTRPCClientError } from "@trpc/client";
import { afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { type HostUser, rawClientFor, servedRuntimes, transportFor } from "./host-app.js";

// The bound on open watches per user, reached over real HTTP (SSE subscriptions).

const alice: HostUser = { userId: "alice", scopeKey: "acme" };
const bob: HostUser = { userId: "bob", scopeKey: "acme" };

const served = servedRuntimes();
afterEach(() => served.closeAll());

describe("maxWatchesPerUser over tRPC", () => {
  it("a subscription beyond the bound fails with TOO_MANY_REQUESTS; closing one frees its slot", async () => {
    const { host } = await served.start({
      agent: defineAgent({ name: "main", tools: {} }),
      model: [],
      maxWatchesPerUser: 2,
    });
    const transport = transportFor(host.url, alice);
    const { threadId } = await transport.threads.create({});

    const open = async (user: HostUser) => {
      const controller = new AbortController();
      const iterator = transportFor(host.url, user)
        .threads.watch({ threadId, afterVersion: 0, signal: controller.signal })
        [Symbol.asyncIterator]();
      const first = await iterator.next();
      return {
        first,
        close: async () => {
          controller.abort();
          await iterator.return?.();
        },
      };
    };
    const one = await open(alice);
    const two = await open(alice);
    expect(one.first.done).toBe(false);

    const refused = await open(alice).then(
      () => null,
      (error: unknown) => error,
    );
    expect(PaiError.isInstance(refused) && refused.code).toBe("TOO_MANY_REQUESTS");
    // Another user is counted apart.
    const bobs = await open(bob);
    expect(bobs.first.done).toBe(false);

    await one.close();
    let again: Awaited<ReturnType<typeof open>> | null = null;
    // The server gives the slot back once it sees the stream closed.
    for (let attempt = 0; attempt < 100 && !again; attempt++) {
      again = await open(alice).catch(async () => {
        await new Promise((resolve) => setTimeout(resolve, 20));
        return null;
      });
    }
    expect(again?.first.done).toBe(false);
    await Promise.all([two, bobs, again!].map((watch) => watch.close()));
  });

  it("a waiting call whose client goes away gives its slot back before waitMs passes", async () => {
    let release = () => {};
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    const slow = defineTool({
      id: "test.watch-slots.slow.v1",
      description: "Takes its time",
      inputSchema: z.object({}),
      outputSchema: z.object({ ok: z.boolean() }),
      execute: async () => {
        await gate;
        return { ok: true };
      },
    });
    const { runtime, host } = await served.start({
      agent: defineAgent({ name: "main", tools: { slow } }),
      model: [{ toolCalls: [{ toolName: "slow", toolCallId: "call-1", input: {} }] }, { text: "Done." }],
      maxWatchesPerUser: 1,
    });
    let threadId: string | undefined;
    // The tool is released however this ends: closing the runtime (afterEach) waits on it.
    try {
      threadId = await abandonWaitingCall(host.url);
    } finally {
      release();
    }
    await runtime.waitForIdle(threadId);
  });
});

/** Whether a watch of `threadId` opens for alice now; it is closed again at once. */
async function watchOpens(url: string, threadId: string): Promise<unknown> {
  const stop = new AbortController();
  const iterator = transportFor(url, alice)
    .threads.watch({ threadId, afterVersion: 0, signal: stop.signal })
    [Symbol.asyncIterator]();
  try {
    await iterator.next();
    return true;
  } catch (error) {
    return error;
  } finally {
    stop.abort();
  }
}

/**
 * Alice's one slot is held by a waiting `create` while its run works; her client goes away.
 * Returns the thread's id once a watch opens again.
 */
async function abandonWaitingCall(url: string): Promise<string> {
  const raw = rawClientFor(url, alice);
  const controller = new AbortController();
  const waiting = raw
    .mutation(
      "pai.threads.create",
      { message: { text: "go" }, waitMs: 60_000 },
      { signal: controller.signal },
    )
    .catch((error: unknown) => error);
  let threadId: string | undefined;
  for (let attempt = 0; attempt < 200 && !threadId; attempt++) {
    const page = (await raw.query("pai.threads.list", {})) as { items: Array<{ threadId: string }> };
    threadId = page.items[0]?.threadId;
    if (!threadId) await new Promise((resolve) => setTimeout(resolve, 10));
  }
  if (!threadId) throw new Error("the waiting create wrote no thread");
  const refused = await watchOpens(url, threadId);
  expect(PaiError.isInstance(refused) && refused.code).toBe("TOO_MANY_REQUESTS");

  controller.abort();
  expect(isTRPCClientError(await waiting)).toBe(true);
  // The server sees the request gone and ends the wait: the slot is back long before 60 s.
  const started = performance.now();
  let opened: unknown = false;
  while (opened !== true && performance.now() - started < 5_000) {
    opened = await watchOpens(url, threadId);
    if (opened !== true) await new Promise((resolve) => setTimeout(resolve, 20));
  }
  expect(opened).toBe(true);
  return threadId;
}
