import { defineAgent, defineTool, type PaiError } from "@pai/core";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { createTestRuntime } from "../support/test-runtime.js";
import { rejection } from "./_helpers.js";

const approve = (recorded: unknown[]) =>
  defineTool({
    id: "test.approve.v1",
    description: "Ask for approval",
    inputSchema: z.object({ summary: z.string() }),
    outputSchema: z.object({ approved: z.boolean() }),
    suspend: {
      approval: {
        suspendSchema: z.object({ prompt: z.string() }),
        resumeSchema: z.object({ approved: z.boolean() }),
      },
    },
    execute: (ctx: any) => {
      recorded.push(ctx.entry.type);
      return ctx.entry.type === "initial"
        ? ctx.suspend("approval", { prompt: ctx.input.summary })
        : ctx.entry.resume;
    },
  });

async function setup(options: { enabled?: () => boolean } = {}) {
  const recorded: unknown[] = [];
  const tool = approve(recorded);
  const t = await createTestRuntime({
    agent: defineAgent({
      tools: { approve: options.enabled ? { tool, enabled: options.enabled } : tool },
    }),
    model: [
      { toolCalls: [{ toolName: "approve", toolCallId: "call-1", input: { summary: "Ship v2" } }] },
      { text: "Thanks." },
    ],
  });
  const threadId = await t.createThread();
  const waiting = await t.send(threadId, "ship it");
  const actionId = waiting.actions[0]!.actionId;
  const base = { identity: t.identity, threadId, actionId };
  return { t, threadId, waiting, actionId, base, recorded };
}

describe("pending actions", () => {
  it("a second submit, cancel or fail of a resolved action is a CONFLICT and writes nothing", async () => {
    const { t, threadId, base, recorded } = await setup();
    await t.pai.service.actions.submit({ ...base, payload: { approved: true } });
    await t.waitForIdle(threadId);
    const settled = await t.snapshot(threadId);

    const service = t.pai.service.actions;
    const attempts = [
      service.submit({ ...base, payload: { approved: false } }),
      service.cancel({ ...base, reason: "too late" }),
      service.fail({ ...base, error: "too late" }),
    ];
    for (const attempt of attempts) {
      expect((await rejection(attempt)).code).toBe("CONFLICT");
    }
    await t.waitForIdle(threadId);
    expect(await t.snapshot(threadId)).toEqual(settled);
    expect(recorded).toEqual(["initial", "resume"]);
  });

  it("two concurrent submits resolve the action once and re-enter the tool once", async () => {
    const { t, threadId, base, recorded } = await setup();
    const results = await Promise.allSettled([
      t.pai.service.actions.submit({ ...base, payload: { approved: true } }),
      t.pai.service.actions.submit({ ...base, payload: { approved: false } }),
    ]);
    await t.waitForIdle(threadId);

    const fulfilled = results.filter((result) => result.status === "fulfilled");
    const rejected = results.flatMap((result) => (result.status === "rejected" ? [result.reason] : []));
    expect(fulfilled).toHaveLength(1);
    expect(rejected.map((error) => (error as PaiError).code)).toEqual(["CONFLICT"]);
    expect(recorded).toEqual(["initial", "resume"]);
    const done = await t.snapshot(threadId);
    expect(done.runs.at(-1)?.status).toBe("completed");
    expect(done.actions).toHaveLength(1);
  });

  it("an idempotent retry of the call that resolved the action returns that call's result instead of CONFLICT", async () => {
    const { t, threadId, base, recorded } = await setup();
    const first = await t.pai.service.actions.submit({
      ...base,
      payload: { approved: true },
      idempotencyKey: "submit-1",
    });
    await t.waitForIdle(threadId);
    const settled = await t.snapshot(threadId);

    const retry = await t.pai.service.actions.submit({
      ...base,
      payload: { approved: true },
      idempotencyKey: "submit-1",
    });
    await t.waitForIdle(threadId);
    expect(retry.action).toEqual(first.action);
    expect(await t.snapshot(threadId)).toEqual(settled);
    expect(recorded).toEqual(["initial", "resume"]);

    const otherKey = await rejection(
      t.pai.service.actions.submit({ ...base, payload: { approved: true }, idempotencyKey: "submit-2" }),
    );
    expect(otherKey.code).toBe("CONFLICT");
    const otherKind = await rejection(t.pai.service.actions.cancel({ ...base, idempotencyKey: "submit-1" }));
    expect(otherKind.code).toBe("CONFLICT");
    // ActionResult.version is "the thread version after the resolution was committed".
    expect(retry.version).toBe(first.version);
  });

  it("an idempotent retry of a cancel returns the cancel's result", async () => {
    const { t, threadId, base } = await setup();
    const first = await t.pai.service.actions.cancel({
      ...base,
      reason: "changed my mind",
      idempotencyKey: "c-1",
    });
    await t.waitForIdle(threadId);
    const retry = await t.pai.service.actions.cancel({
      ...base,
      reason: "changed my mind",
      idempotencyKey: "c-1",
    });
    expect(retry.action).toEqual(first.action);
    expect(retry.action.state).toBe("cancelled");
    expect(retry.version).toBe(first.version);
  });

  it("actions.list shows the scope's pending actions and not another scope's", async () => {
    const { t, actionId } = await setup();
    const mine = await t.pai.service.actions.list({ identity: t.identity, state: "pending" });
    expect(mine.items.map((action) => action.actionId)).toEqual([actionId]);
    const theirs = await t.pai.service.actions.list({
      identity: { scopeKey: "other-scope", userKey: "mallory" },
      state: "pending",
    });
    expect(theirs.items).toEqual([]);
  });

  it("a submit to a tool that became disabled is rejected while cancel still closes the action", async () => {
    let enabled = true;
    const { t, threadId, base, waiting } = await setup({ enabled: () => enabled });
    enabled = false;

    const error = await rejection(t.pai.service.actions.submit({ ...base, payload: { approved: true } }));
    expect(error.code).toBe("TOOL_DISABLED");
    await t.waitForIdle(threadId);
    expect((await t.snapshot(threadId)).thread.version).toBe(waiting.thread.version);

    const done = await t.cancel(threadId, base.actionId, "tool disabled");
    expect(done.actions[0]).toMatchObject({ state: "cancelled" });
    expect(done.runs.at(-1)?.status).toBe("completed");
  });
});
