import { createPaiClient } from "@pai/client";
import { defineAgent, defineTool } from "@pai/core";
import { isTRPCClientError } from "@trpc/client";
import { afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { type HostUser, rawClientFor, servedRuntimes, transportFor } from "./host-app.js";

// A new conversation in one request: threads.create with the first message, over real HTTP.

const alice: HostUser = { userId: "alice", scopeKey: "acme" };

const approve = defineTool({
  id: "test.create-with-message.approve.v1",
  description: "Ask for approval",
  inputSchema: z.object({ summary: z.string() }),
  outputSchema: z.object({ approved: z.boolean() }),
  suspend: {
    approval: {
      suspendSchema: z.object({ prompt: z.string() }),
      resumeSchema: z.object({ approved: z.boolean() }),
    },
  },
  execute: (ctx: any) =>
    ctx.entry.type === "initial" ? ctx.suspend("approval", { prompt: ctx.input.summary }) : ctx.entry.resume,
});

const served = servedRuntimes();
afterEach(() => served.closeAll());

function start() {
  return served.start({
    agent: defineAgent({ name: "main", tools: { approve } }),
    model: [
      { toolCalls: [{ toolName: "approve", toolCallId: "call-1", input: { summary: "Ship v2" } }] },
      { text: "Shipped." },
    ],
  });
}

const rawClient = (url: string) => rawClientFor(url, alice);

describe("threads.create with a first message, over tRPC HTTP", () => {
  it("one request creates the thread and starts its run; the typed client then answers the action", async () => {
    const { runtime, host } = await start();
    const client = createPaiClient({ transport: transportFor(host.url, alice) });
    const before = host.requests.length;
    const thread = await client.createThread({ title: "launch", message: { text: "ship it" } });
    expect(host.requests.length - before).toBe(1);
    await runtime.waitForIdle(thread.id);

    const state = await thread.refresh();
    expect(state.messages[0]).toMatchObject({ role: "user" });
    const [action] = state.pending;
    expect(action).toMatchObject({ name: "approve.approval", input: { prompt: "Ship v2" } });
    await action!.submit({ approved: true });
    await runtime.waitForIdle(thread.id);
    const done = await thread.refresh();
    expect(done.run?.status).toBe("completed");
    expect(done.pending).toEqual([]);
  });

  it("answers the created row running, with its run's id, and refuses a bad first message with 400", async () => {
    const { runtime, host } = await start();
    const raw = rawClient(host.url);
    const row = (await raw.mutation("pai.threads.create", { message: { text: "ship it" } })) as {
      threadId: string;
      status: string;
      activeRunId: string | null;
      scopeKey?: string;
    };
    expect(row.status).toBe("running");
    expect(row.activeRunId).toEqual(expect.any(String));
    expect(row.scopeKey).toBeUndefined();
    await runtime.waitForIdle(row.threadId);

    const bad = [
      { message: { text: "" } },
      { message: { text: "hi", extra: true } },
      { message: { parts: [] } },
      { clientData: { a: 1 } },
      { message: { text: "hi" }, clientTools: [{ name: "approve", description: "x", inputSchema: {} }] },
    ];
    for (const input of bad) {
      const error = await raw.mutation("pai.threads.create", input).then(
        () => null,
        (caught: unknown) => caught,
      );
      expect(isTRPCClientError(error), JSON.stringify(input)).toBe(true);
      expect((error as { data?: { httpStatus?: number } }).data?.httpStatus, JSON.stringify(input)).toBe(400);
    }
    const listed = (await raw.query("pai.threads.list", {})) as { items: unknown[] };
    expect(listed.items).toHaveLength(1);
  });

  it("with waitMs, create answers the parked run's pending action and submit the finished thread: two requests", async () => {
    const { host } = await start();
    const raw = rawClient(host.url);
    const before = host.requests.length;
    const created = (await raw.mutation("pai.threads.create", {
      message: { text: "ship it" },
      waitMs: 5_000,
    })) as { threadId: string; settled?: { done: boolean; view: any } };
    expect(created.settled?.done).toBe(true);
    const [pending] = created.settled!.view.pending;
    expect(pending).toMatchObject({ name: "approve.approval", input: { prompt: "Ship v2" } });
    const answered = (await raw.mutation("pai.actions.submit", {
      threadId: created.threadId,
      actionId: pending.ref.actionId,
      name: pending.name,
      payload: { approved: true },
      waitMs: 5_000,
    })) as { settled?: { done: boolean; view: any } };
    expect(host.requests.length - before).toBe(2);
    expect(answered.settled?.done).toBe(true);
    expect(answered.settled!.view.run.status).toBe("completed");
    expect(answered.settled!.view.pending).toEqual([]);
    // The client view only: no scope key, no stored identity.
    expect(JSON.stringify([created, answered])).not.toMatch(/scopeKey|"identity"/);
    const error = await raw
      .mutation("pai.threads.send", { threadId: created.threadId, message: { text: "x" }, waitMs: 60_001 })
      .then(
        () => null,
        (caught: unknown) => caught,
      );
    expect((error as { data?: { httpStatus?: number } }).data?.httpStatus).toBe(400);
  });
});
