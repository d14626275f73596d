import { defineAgent, PaiError } from "@pai/core";
import { afterEach, describe, expect, it } from "vitest";
import { type HostUser, servedRuntimes, transportFor } from "./host-app.js";

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
});
