import { defineAgent, defineTool } from "@pai/core";
import { projectThreadState } from "@pai/core/protocol";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { createTestRuntime } from "../support/test-runtime.js";
import { rejection, scripted, steppingClock, toolResultFor } from "./_helpers.js";

type Recorded = { entry: any; suspendHistory: unknown[] };

/**
 * A publishing tool with two wait points: `approval` then `schedule`. What the re-entry does
 * after `approval` is chosen by the submitted payload, so one definition covers "suspend
 * again", "return output" and "fail".
 */
function publishTool(recorded: Recorded[], overrides: Record<string, unknown> = {}) {
  return defineTool({
    id: "test.publish.v1",
    description: "Publish a post after approval",
    inputSchema: z.object({ title: z.string() }),
    outputSchema: z.object({ published: z.boolean(), at: z.string().optional() }),
    suspend: {
      approval: {
        suspendSchema: z.object({ prompt: z.string() }),
        resumeSchema: z.object({ decision: z.enum(["approve", "schedule", "refuse", "garbage"]) }),
      },
      schedule: {
        suspendSchema: z.object({ options: z.array(z.string()) }),
        resumeSchema: z.object({ at: z.string() }),
      },
    },
    execute: (ctx: any) => {
      recorded.push({ entry: ctx.entry, suspendHistory: ctx.suspendHistory });
      if (ctx.entry.type === "initial") {
        return ctx.suspend("approval", { prompt: `Publish "${ctx.input.title}"?` });
      }
      if (ctx.entry.name === "approval") {
        switch (ctx.entry.resume.decision) {
          case "approve":
            return { published: true };
          case "schedule":
            return ctx.suspend("schedule", { options: ["09:00", "17:00"] });
          case "refuse":
            return ctx.fail("The editor refused to publish this post.");
          default:
            return { published: "maybe" };
        }
      }
      return { published: true, at: ctx.entry.resume.at };
    },
    ...overrides,
  });
}

async function setup(options: { clock?: () => Date; calls?: number } = {}) {
  const recorded: Recorded[] = [];
  const calls = options.calls ?? 1;
  const t = await createTestRuntime({
    agent: defineAgent({ tools: { publish: publishTool(recorded) } }),
    model: [
      {
        toolCalls: Array.from({ length: calls }, (_, index) => ({
          toolName: "publish",
          toolCallId: `call-${index + 1}`,
          input: { title: `Post ${index + 1}` },
        })),
      },
      { text: "All settled." },
    ],
    ...(options.clock ? { clock: options.clock } : {}),
  });
  const threadId = await t.createThread();
  const waiting = await t.send(threadId, "publish it");
  return { t, threadId, waiting, recorded };
}

describe("suspend and resume", () => {
  it("ctx.suspend persists a pending action named tool.point with input, origin and ref, and the run waits", async () => {
    const { t, threadId, waiting } = await setup();
    const run = waiting.runs.at(-1)!;
    expect(run.status).toBe("waiting");
    expect(waiting.thread.status).toBe("waiting");

    const [action] = waiting.actions;
    expect(action).toMatchObject({
      name: "publish.approval",
      kind: "suspend",
      toolName: "publish",
      suspendName: "approval",
      input: { prompt: 'Publish "Post 1"?' },
      state: "pending",
      threadId,
      runId: run.runId,
      messageId: run.messageId,
      toolCallId: "call-1",
    });

    const view = projectThreadState(waiting);
    const origin = {
      kind: "tool",
      threadId,
      toolName: "publish",
      suspendName: "approval",
      messageId: run.messageId,
      toolCallId: "call-1",
      runId: run.runId,
    };
    expect(view.pending).toEqual([
      {
        name: "publish.approval",
        input: { prompt: 'Publish "Post 1"?' },
        origin,
        ref: { ...origin, actionId: action!.actionId, name: "publish.approval" },
        deadline: null,
      },
    ]);
    const assistant = view.messages.find((message) => message.id === run.messageId)!;
    const part = assistant.parts.find((candidate: any) => candidate.toolCallId === "call-1") as any;
    expect(part.state).toBe("input-available");
    expect(part.pendingSuspension).toMatchObject({
      actionId: action!.actionId,
      name: "approval",
      state: "pending",
    });
    await t.close();
  });

  it("an invalid submit is rejected with INVALID_INPUT and its issues, stays waiting and writes nothing", async () => {
    const { t, threadId, waiting } = await setup();
    const action = waiting.actions[0]!;
    const error = await rejection(
      t.pai.service.actions.submit({
        identity: t.identity,
        threadId,
        actionId: action.actionId,
        payload: { decision: "perhaps" },
      }),
    );
    expect(error.code).toBe("INVALID_INPUT");
    expect(error.issues?.length).toBeGreaterThan(0);
    expect(error.issues?.[0]?.path).toEqual(["decision"]);

    await t.waitForIdle(threadId);
    const after = await t.snapshot(threadId);
    expect(after.thread.version).toBe(waiting.thread.version);
    expect(after).toEqual(waiting);
    expect(await t.storage.readEvents({ threadId, afterVersion: waiting.thread.version })).toEqual([]);
  });

  it("a valid submit re-enters the tool exactly once with ctx.entry resume", async () => {
    const { t, threadId, waiting, recorded } = await setup();
    const action = waiting.actions[0]!;
    const done = await t.submit(threadId, action.actionId, { decision: "approve" });

    expect(recorded.map((item) => item.entry.type)).toEqual(["initial", "resume"]);
    expect(recorded[1]!.entry).toEqual({
      type: "resume",
      name: "approval",
      resume: { decision: "approve" },
      action: projectThreadState(waiting).pending[0]!.ref,
    });
    const [part] = await t.toolParts(threadId);
    expect(part).toMatchObject({ state: "output-available", output: { published: true } });
    expect(done.runs.at(-1)?.status).toBe("completed");
    expect(toolResultFor(scripted(t), 1, "call-1").output).toEqual({
      type: "json",
      value: { published: true },
    });
  });

  it("a re-entry can suspend again at another wait point", async () => {
    const { t, threadId, recorded } = await setup();
    const afterFirst = await t.submit(threadId, "publish.approval", { decision: "schedule" });

    expect(afterFirst.runs.at(-1)?.status).toBe("waiting");
    const pending = await t.pending(threadId);
    expect(pending).toHaveLength(1);
    expect(pending[0]).toMatchObject({
      name: "publish.schedule",
      suspendName: "schedule",
      input: { options: ["09:00", "17:00"] },
      toolCallId: "call-1",
      episode: 2,
    });
    await t.submit(threadId, "publish.schedule", { at: "17:00" });
    expect(recorded.map((item) => item.entry.name ?? item.entry.type)).toEqual([
      "initial",
      "approval",
      "schedule",
    ]);
    const [part] = await t.toolParts(threadId);
    expect(part).toMatchObject({ state: "output-available", output: { published: true, at: "17:00" } });
    expect(await t.lastText(threadId)).toBe("All settled.");
  });

  it("a re-entry can fail with ctx.fail", async () => {
    const { t, threadId } = await setup();
    const done = await t.submit(threadId, "publish.approval", { decision: "refuse" });

    const [part] = await t.toolParts(threadId);
    expect(part).toMatchObject({
      state: "output-error",
      errorText: "The editor refused to publish this post.",
    });
    expect(done.runs.at(-1)?.status).toBe("completed");
    expect(done.actions[0]).toMatchObject({ state: "submitted" });
  });

  it("cancel with a reason records a model-visible output-error and closes the action", async () => {
    const { t, threadId, recorded } = await setup();
    const done = await t.cancel(threadId, "publish.approval", "the user closed the dialog");

    expect(recorded).toHaveLength(1);
    expect(done.actions[0]).toMatchObject({ state: "cancelled", reason: "the user closed the dialog" });
    const [part] = await t.toolParts(threadId);
    expect(part).toMatchObject({ state: "output-error" });
    expect(part!.errorText).toContain("the user closed the dialog");
    expect(toolResultFor(scripted(t), 1, "call-1").output).toEqual({
      type: "error-text",
      value: part!.errorText,
    });
    const projected = projectThreadState(done).messages.flatMap((message) => message.parts) as any[];
    expect(projected.find((candidate) => candidate.toolCallId === "call-1").cancelled).toBe(true);
    expect(done.runs.at(-1)?.status).toBe("completed");
  });

  it("fail records a model-visible output-error with the failure and closes the action", async () => {
    const { t, threadId, recorded } = await setup();
    const done = await t.fail(threadId, "publish.approval", "The approval service rejected the request.");

    expect(recorded).toHaveLength(1);
    expect(done.actions[0]).toMatchObject({ state: "failed" });
    const [part] = await t.toolParts(threadId);
    expect(part).toMatchObject({
      state: "output-error",
      errorText: "The approval service rejected the request.",
    });
    expect(toolResultFor(scripted(t), 1, "call-1").output).toEqual({
      type: "error-text",
      value: "The approval service rejected the request.",
    });
    expect(done.runs.at(-1)?.status).toBe("completed");
  });

  it("ctx.suspendHistory lists the call's earlier episodes with their resolution and payload", async () => {
    const { t, threadId, recorded } = await setup({ clock: steppingClock() });
    await t.submit(threadId, "publish.approval", { decision: "schedule" });
    await t.submit(threadId, "publish.schedule", { at: "09:00" });

    expect(recorded[0]!.suspendHistory).toEqual([]);
    const finalHistory = recorded[2]!.suspendHistory as any[];
    expect(finalHistory).toHaveLength(2);
    expect(finalHistory[0]).toMatchObject({
      name: "approval",
      input: { prompt: 'Publish "Post 1"?' },
      status: "submitted",
      resume: { decision: "schedule" },
    });
    expect(finalHistory[1]).toMatchObject({
      name: "schedule",
      input: { options: ["09:00", "17:00"] },
      status: "submitted",
      resume: { at: "09:00" },
    });
    for (const item of finalHistory) {
      expect(Date.parse(item.resumedAt)).toBeGreaterThan(Date.parse(item.suspendedAt));
    }
    const secondHistory = recorded[1]!.suspendHistory as any[];
    expect(secondHistory).toHaveLength(1);
    expect(secondHistory[0]).toMatchObject({ name: "approval", status: "submitted" });
  });

  it("projected suspensions show pending, submitted, cancelled and failed episodes with timestamps", async () => {
    const { t, threadId, waiting } = await setup({ clock: steppingClock(), calls: 3 });
    const partsOf = (snapshot: typeof waiting) =>
      projectThreadState(snapshot).messages.flatMap((message) => message.parts) as any[];
    const byCall = (snapshot: typeof waiting, id: string) =>
      partsOf(snapshot).find((part) => part.toolCallId === id);

    for (const id of ["call-1", "call-2", "call-3"]) {
      const part = byCall(waiting, id);
      expect(part.suspensions).toHaveLength(1);
      expect(part.suspensions[0]).toMatchObject({ name: "approval", state: "pending" });
      expect(part.suspensions[0].suspendedAt).toEqual(expect.any(String));
      expect(part.pendingSuspension).toEqual(part.suspensions[0]);
    }
    const actionOf = (id: string) => waiting.actions.find((action) => action.toolCallId === id)!.actionId;

    await t.submit(threadId, actionOf("call-1"), { decision: "approve" });
    await t.cancel(threadId, actionOf("call-2"), "not needed");
    const done = await t.fail(threadId, actionOf("call-3"), "Approval timed out.");

    const submitted = byCall(done, "call-1");
    expect(submitted.pendingSuspension).toBeNull();
    expect(submitted.suspensions).toEqual([
      {
        actionId: actionOf("call-1"),
        name: "approval",
        input: { prompt: 'Publish "Post 1"?' },
        suspendedAt: expect.any(String),
        deadline: null,
        state: "submitted",
        resolvedAt: expect.any(String),
        resume: { decision: "approve" },
      },
    ]);
    expect(byCall(done, "call-2").suspensions[0]).toMatchObject({ state: "cancelled" });
    expect(byCall(done, "call-3").suspensions[0]).toMatchObject({ state: "failed" });
    for (const id of ["call-1", "call-2", "call-3"]) {
      const [episode] = byCall(done, id).suspensions;
      expect(byCall(done, id).pendingSuspension).toBeNull();
      expect(Date.parse(episode.resolvedAt)).toBeGreaterThan(Date.parse(episode.suspendedAt));
    }
    expect(done.runs.at(-1)?.status).toBe("completed");
  });

  it("resumed output that fails outputSchema becomes an output-error, not a pending action again", async () => {
    const { t, threadId } = await setup();
    const done = await t.submit(threadId, "publish.approval", { decision: "garbage" });

    const [part] = await t.toolParts(threadId);
    expect(part).toMatchObject({ state: "output-error" });
    expect(part!.errorText).toMatch(/outputSchema/);
    expect(await t.pending(threadId)).toEqual([]);
    expect(done.runs.at(-1)?.status).toBe("completed");
  });

  it("suspend data that fails suspendSchema becomes an output-error instead of a pending action", async () => {
    const recorded: Recorded[] = [];
    const tool = publishTool(recorded, {
      execute: (ctx: any) => ctx.suspend("approval", { prompt: 42 }),
    });
    const t = await createTestRuntime({
      agent: defineAgent({ tools: { publish: tool } }),
      model: [
        { toolCalls: [{ toolName: "publish", toolCallId: "call-1", input: { title: "Post" } }] },
        { text: "Could not ask." },
      ],
    });
    const threadId = await t.createThread();
    const snapshot = await t.send(threadId, "publish it");

    expect(snapshot.actions).toEqual([]);
    const [part] = await t.toolParts(threadId);
    expect(part).toMatchObject({ state: "output-error" });
    expect(part!.errorText).toMatch(/suspendSchema/);
    expect(snapshot.runs.at(-1)?.status).toBe("completed");
  });

  it("fail accepts an error object and records its message", async () => {
    const { t, threadId, waiting } = await setup();
    await t.pai.service.actions.fail({
      identity: t.identity,
      threadId,
      actionId: waiting.actions[0]!.actionId,
      error: { message: "The reviewer's account was deleted." },
    });
    await t.waitForIdle(threadId);
    const [part] = await t.toolParts(threadId);
    expect(part).toMatchObject({ state: "output-error", errorText: "The reviewer's account was deleted." });
  });

  it("onOutput of a suspending tool runs once, on the resumed output", async () => {
    const seen: unknown[] = [];
    const recorded: Recorded[] = [];
    const t = await createTestRuntime({
      agent: defineAgent({
        tools: {
          publish: {
            tool: publishTool(recorded),
            onOutput: ({ output }: any) => {
              seen.push(output);
            },
          },
        },
      }),
      model: [
        { toolCalls: [{ toolName: "publish", toolCallId: "call-1", input: { title: "Post" } }] },
        { text: "Published." },
      ],
    });
    const threadId = await t.createThread();
    await t.send(threadId, "publish it");
    expect(seen).toEqual([]);

    await t.submit(threadId, "publish.approval", { decision: "approve" });
    expect(seen).toEqual([{ published: true }]);
  });

  it("ctx.entry.resume is the payload parsed by resumeSchema, defaults included", async () => {
    const resumes: unknown[] = [];
    const confirm = defineTool({
      id: "test.confirm.v1",
      description: "Confirm",
      inputSchema: z.object({}),
      outputSchema: z.object({ ok: z.boolean(), note: z.string() }),
      suspend: {
        confirm: {
          suspendSchema: z.object({ question: z.string() }),
          resumeSchema: z.object({ ok: z.boolean(), note: z.string().default("no note") }),
        },
      },
      execute: (ctx) => {
        if (ctx.entry.type === "initial") return ctx.suspend("confirm", { question: "Sure?" });
        resumes.push(ctx.entry.resume);
        return ctx.entry.resume;
      },
    });
    const t = await createTestRuntime({
      agent: defineAgent({ tools: { confirm } }),
      model: [{ toolCalls: [{ toolName: "confirm", toolCallId: "call-1", input: {} }] }, { text: "ok" }],
    });
    const threadId = await t.createThread();
    await t.send(threadId, "go");
    await t.submit(threadId, "confirm.confirm", { ok: true });

    expect(resumes).toEqual([{ ok: true, note: "no note" }]);
    const [part] = await t.toolParts(threadId);
    expect(part).toMatchObject({ state: "output-available", output: { ok: true, note: "no note" } });
  });
});
