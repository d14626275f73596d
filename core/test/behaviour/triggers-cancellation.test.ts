import { type ClientToolSnapshot, defineAgent, defineTool } from "@pai/core";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { internalsOf } from "../../src/pai/internals.js";
import { createTestRuntime } from "../support/test-runtime.js";
import { deferred, eventually, projectedPart, scripted, toolNamesInCall } from "./_helpers.js";

const approve = defineTool({
  id: "test.triggers.approve.v1",
  description: "Ask for approval",
  inputSchema: z.object({}),
  outputSchema: z.object({ approved: z.boolean() }),
  suspend: {
    approval: { suspendSchema: z.object({}), resumeSchema: z.object({ approved: z.boolean() }) },
  },
  execute: (ctx) => (ctx.entry.type === "initial" ? ctx.suspend("approval", {}) : ctx.entry.resume),
});

const clientTool = (name: string): ClientToolSnapshot => ({
  name,
  description: `Client tool ${name}`,
  inputSchema: { type: "object", properties: {} },
});

/** A tool that waits until its signal aborts, recording that it saw the abort. */
const waitForAbort = (id: string, aborted: string[], started: () => void) =>
  defineTool({
    id: id as "test.triggers.wait-for-abort",
    description: "Wait for cancellation",
    inputSchema: z.object({}),
    execute: (ctx) =>
      new Promise((_resolve, reject) => {
        ctx.signal.addEventListener(
          "abort",
          () => {
            aborted.push(id);
            reject(ctx.signal.reason);
          },
          { once: true },
        );
        started();
      }),
  });

describe("triggers", () => {
  it("ctx.trigger from a running tool is queued while the run is active and started after it", async () => {
    let result: unknown;
    const notify = defineTool({
      id: "test.triggers.notify.v1",
      description: "Start background work",
      inputSchema: z.object({}),
      execute: async (ctx) => {
        result = await ctx.trigger({
          notification: "Background job finished.",
          data: { jobId: "job-7" },
          hidden: true,
        });
        return { started: true };
      },
    });
    const t = await createTestRuntime({
      agent: defineAgent({ tools: { notify } }),
      model: [
        { toolCalls: [{ toolName: "notify", toolCallId: "call-n", input: {} }] },
        { text: "Started the job." },
        { text: "The job is done." },
      ],
    });
    const threadId = await t.createThread();
    await t.send(threadId, "start");
    await t.waitForIdle(threadId);

    expect(result).toMatchObject({ queued: true });
    const snapshot = await t.snapshot(threadId);
    expect(snapshot.runs.map((run) => run.status)).toEqual(["completed", "completed"]);
    expect(snapshot.runs[1]!.trigger).toMatchObject({
      type: "trigger",
      notification: "Background job finished.",
      data: { jobId: "job-7" },
      hidden: true,
    });
    // The second run started only after the first had finished its last step.
    expect(snapshot.runs[1]!.createdAt <= snapshot.runs[0]!.finishedAt!).toBe(true);
    const notification = snapshot.messages.find(
      (message) =>
        (message.message.metadata as { pai?: { kind?: string } } | undefined)?.pai?.kind === "notification",
    );
    expect(notification?.message.metadata).toMatchObject({
      pai: { kind: "notification", hidden: true, data: { jobId: "job-7" } },
    });
    expect(scripted(t).calls).toHaveLength(3);
    expect(JSON.stringify(scripted(t).calls[1]!.prompt)).not.toContain("Background job finished.");
    expect(JSON.stringify(scripted(t).calls[2]!.prompt)).toContain("Background job finished.");
    expect(await t.lastText(threadId)).toBe("The job is done.");
  });

  it("a trusted trigger on an idle thread starts a run at once", async () => {
    const t = await createTestRuntime({ agent: defineAgent({ tools: {} }), model: [{ text: "Noted." }] });
    const threadId = await t.createThread();
    const triggered = await t.pai.trusted.trigger({
      threadId,
      scope: { scopeKey: "test-scope" },
      notification: "Deploy finished.",
    });
    expect(triggered.queued).toBe(false);
    await t.waitForIdle(threadId);
    expect((await t.lastRun(threadId))?.status).toBe("completed");
    expect(JSON.stringify(scripted(t).calls[0]!.prompt)).toContain("Deploy finished.");
  });

  it("a queued trigger starts with the fresh client-tool snapshot of the latest request", async () => {
    const t = await createTestRuntime({
      agent: defineAgent({ tools: { approve } }),
      model: [
        { toolCalls: [{ toolName: "approve", toolCallId: "call-a", input: {} }] },
        { text: "Approved." },
        { text: "Handled the notification." },
      ],
    });
    const threadId = await t.createThread();
    await t.send(threadId, "ask", { clientTools: [clientTool("client.old")] });
    const triggered = await t.pai.trusted.trigger({
      threadId,
      scope: { scopeKey: "test-scope" },
      notification: "Something happened.",
    });
    expect(triggered.queued).toBe(true);

    await t.pai.service.actions.submit({
      identity: t.identity,
      threadId,
      actionId: (await t.action(threadId, "approve.approval")).actionId,
      payload: { approved: true },
      clientTools: [clientTool("client.fresh")],
    });
    await t.waitForIdle(threadId);

    const snapshot = await t.snapshot(threadId);
    expect(snapshot.runs.map((run) => run.status)).toEqual(["completed", "completed"]);
    expect(toolNamesInCall(scripted(t), 2)).toEqual(["approve", "client.fresh"]);
  });
});

describe("cancellation", () => {
  it("cancelling a run aborts ctx.signal of every running tool and each call reads as part.cancelled", async () => {
    const aborted: string[] = [];
    let started = 0;
    const bothStarted = deferred();
    const onStart = () => {
      if (++started === 2) bothStarted.resolve();
    };
    const t = await createTestRuntime({
      onRuntimeError: () => undefined,
      agent: defineAgent({
        tools: {
          first: waitForAbort("test.triggers.first.v1", aborted, onStart),
          second: waitForAbort("test.triggers.second.v1", aborted, onStart),
        },
      }),
      model: [
        {
          toolCalls: [
            { toolName: "first", toolCallId: "c1", input: {} },
            { toolName: "second", toolCallId: "c2", input: {} },
          ],
        },
      ],
    });
    const threadId = await t.createThread();
    await t.pai.service.threads.send({ identity: t.identity, threadId, message: { text: "go" } });
    await bothStarted.promise;
    await internalsOf(t.pai).cancelRunOf(threadId, "stopped by the user");
    await t.waitForIdle(threadId);

    expect(aborted.sort()).toEqual(["test.triggers.first.v1", "test.triggers.second.v1"]);
    const snapshot = await t.snapshot(threadId);
    expect(snapshot.runs.at(-1)?.status).toBe("cancelled");
    for (const id of ["c1", "c2"]) {
      expect(projectedPart(snapshot, id)).toMatchObject({ state: "output-error", cancelled: true });
    }
    expect(scripted(t).calls).toHaveLength(1);
  });

  it("a tool that ignores the signal and returns after cancellation does not overwrite the cancelled call", async () => {
    const started = deferred();
    const finish = deferred();
    let returned = false;
    const stubborn = defineTool({
      id: "test.triggers.stubborn.v1",
      description: "Ignores cancellation",
      inputSchema: z.object({}),
      execute: async () => {
        started.resolve();
        await finish.promise;
        returned = true;
        return { late: true };
      },
    });
    const t = await createTestRuntime({
      agent: defineAgent({ tools: { stubborn } }),
      model: [{ toolCalls: [{ toolName: "stubborn", toolCallId: "c1", input: {} }] }],
    });
    const threadId = await t.createThread();
    await t.pai.service.threads.send({ identity: t.identity, threadId, message: { text: "go" } });
    await started.promise;
    await t.pai.service.threads.cancel({ identity: t.identity, threadId });
    finish.resolve();
    await t.waitForIdle(threadId);

    expect(returned).toBe(true);
    const snapshot = await t.snapshot(threadId);
    expect(projectedPart(snapshot, "c1")).toMatchObject({ state: "output-error", cancelled: true });
    expect(JSON.stringify(snapshot.messages)).not.toContain('"late"');
    expect(snapshot.runs.at(-1)?.status).toBe("cancelled");
  });

  it("cancelling a waiting run closes its pending actions and the call reads as cancelled", async () => {
    const t = await createTestRuntime({
      agent: defineAgent({ tools: { approve } }),
      model: [{ toolCalls: [{ toolName: "approve", toolCallId: "call-a", input: {} }] }],
    });
    const threadId = await t.createThread();
    await t.send(threadId, "ask");
    await t.pai.service.threads.cancel({ identity: t.identity, threadId, reason: "changed my mind" });
    await t.waitForIdle(threadId);

    const snapshot = await t.snapshot(threadId);
    expect(snapshot.actions.map((action) => action.state)).toEqual(["cancelled"]);
    expect(snapshot.runs.at(-1)?.status).toBe("cancelled");
    const part = projectedPart(snapshot, "call-a");
    expect(part).toMatchObject({ state: "output-error", cancelled: true, pendingSuspension: null });
    expect(part.suspensions).toMatchObject([{ state: "cancelled" }]);
  });

  it("a trigger queued behind a run starts once that run is cancelled", async () => {
    const t = await createTestRuntime({
      agent: defineAgent({ tools: { approve } }),
      model: [{ toolCalls: [{ toolName: "approve", toolCallId: "call-a", input: {} }] }, { text: "Noted." }],
    });
    const threadId = await t.createThread();
    await t.send(threadId, "ask");
    const triggered = await t.pai.trusted.trigger({
      threadId,
      scope: { scopeKey: "test-scope" },
      notification: "Heads up.",
    });
    expect(triggered.queued).toBe(true);
    await t.pai.service.threads.cancel({ identity: t.identity, threadId });
    await t.waitForIdle(threadId);
    await eventually(async () => (await t.lastRun(threadId))?.status === "completed");

    const snapshot = await t.snapshot(threadId);
    expect(snapshot.runs.map((run) => run.status)).toEqual(["cancelled", "completed"]);
    expect(await t.lastText(threadId)).toBe("Noted.");
  });
});
