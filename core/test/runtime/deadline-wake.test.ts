import { defineAgent, defineTool, PaiError, type RuntimeEvent } from "@pai/core";
import { internalsOf } from "@pai/core/testing";
import { memoryStorage } from "@pai/storage-memory";
import { afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { createTestRuntime } from "../support/test-runtime.js";
import { handClock, scripted, toolResultFor } from "./_helpers.js";

// One definition per mode: a tool's id is one literal, so a factory over both modes would not compile.
const approvalPoint = (onDeadline: "cancel" | "fail") => ({
  suspendSchema: z.object({ prompt: z.string() }),
  resumeSchema: z.object({ approved: z.boolean() }),
  deadline: { in: 60_000, onDeadline, reason: "Nobody approved within a minute; do not publish." },
});
const approveTools = {
  cancel: defineTool({
    id: "test.deadline-approve-cancel.v1",
    description: "Asks for approval, for a minute at most",
    inputSchema: z.object({ what: z.string() }),
    outputSchema: z.object({ approved: z.boolean() }),
    suspend: { approval: approvalPoint("cancel") },
    execute: (ctx) =>
      ctx.entry.type === "initial" ? ctx.suspend("approval", { prompt: ctx.input.what }) : ctx.entry.resume,
  }),
  fail: defineTool({
    id: "test.deadline-approve-fail.v1",
    description: "Asks for approval, for a minute at most",
    inputSchema: z.object({ what: z.string() }),
    outputSchema: z.object({ approved: z.boolean() }),
    suspend: { approval: approvalPoint("fail") },
    execute: (ctx) =>
      ctx.entry.type === "initial" ? ctx.suspend("approval", { prompt: ctx.input.what }) : ctx.entry.resume,
  }),
};
const approve = (onDeadline: "cancel" | "fail") => approveTools[onDeadline];

const code = (expected: string) => (error: unknown) => PaiError.isInstance(error) && error.code === expected;

describe("deadlines of pending actions", () => {
  const open: Array<{ close(): Promise<void> }> = [];
  afterEach(async () => {
    for (const runtime of open.splice(0)) await runtime.close();
  });

  it.each(["cancel", "fail"] as const)(
    "when the deadline passes the action is %sed once, the model reads the reason, a late answer gets CONFLICT",
    async (onDeadline) => {
      const time = handClock();
      const events: RuntimeEvent[] = [];
      const runtime = await createTestRuntime({
        agent: defineAgent({ tools: { approve: approve(onDeadline) } }),
        clock: time.clock,
        observers: [(event) => void events.push(event)],
        model: [
          { toolCalls: [{ toolName: "approve", toolCallId: "call-1", input: { what: "the post" } }] },
          { text: "Not published: no approval arrived." },
        ],
      });
      open.push(runtime);
      const threadId = await runtime.createThread();
      const waiting = await runtime.send(threadId, "publish the post");
      const action = waiting.actions[0]!;
      expect(action.deadline).toEqual({
        at: "2030-01-07T08:01:00.000Z",
        resolution: onDeadline,
        reason: "Nobody approved within a minute; do not publish.",
      });
      expect(waiting.thread.wakeAt).toBe("2030-01-07T08:01:00.000Z");
      // Early: nothing happens.
      time.set("2030-01-07T08:00:59.999Z");
      await runtime.pai.recover();
      expect((await runtime.pending(threadId)).map((row) => row.actionId)).toEqual([action.actionId]);
      time.set("2030-01-07T08:01:00.000Z");
      await Promise.all([runtime.pai.recover(), runtime.pai.recover()]);
      await runtime.pai.waitForIdle(threadId);
      const after = await runtime.snapshot(threadId);
      const resolved = after.actions[0]!;
      expect(resolved.state).toBe(onDeadline === "cancel" ? "cancelled" : "failed");
      expect(resolved.reason).toContain("Nobody approved within a minute");
      expect(after.runs[0]!.status).toBe("completed");
      expect(after.thread.wakeAt ?? null).toBeNull();
      const result = toolResultFor(scripted(runtime), 1, "call-1");
      expect(JSON.stringify(result.output)).toContain("Nobody approved within a minute");
      expect(events.filter((event) => event.type === "action-resolved")).toHaveLength(1);
      await expect(runtime.submit(threadId, action.actionId, { approved: true })).rejects.toSatisfy(
        code("CONFLICT"),
      );
    },
  );

  it("an answer before the deadline wins; the deadline then does nothing", async () => {
    const time = handClock();
    const runtime = await createTestRuntime({
      agent: defineAgent({ tools: { approve: approve("cancel") } }),
      clock: time.clock,
      model: [
        { toolCalls: [{ toolName: "approve", toolCallId: "call-1", input: { what: "x" } }] },
        { text: "Published." },
      ],
    });
    open.push(runtime);
    const threadId = await runtime.createThread();
    const waiting = await runtime.send(threadId, "publish");
    await runtime.submit(threadId, waiting.actions[0]!.actionId, { approved: true });
    time.set("2030-01-07T09:00:00.000Z");
    await runtime.pai.recover();
    const after = await runtime.snapshot(threadId);
    expect(after.actions[0]!.state).toBe("submitted");
    expect(after.thread.wakeAt ?? null).toBeNull();
  });

  it("an answer and a deadline racing on one storage from two runtimes resolve once, 100 times over", async () => {
    const storage = memoryStorage();
    const time = handClock();
    const events: RuntimeEvent[] = [];
    const agent = defineAgent({ tools: { approve: approve("cancel") } });
    const script = (n: number) =>
      Array.from({ length: n }, (_, index) => [
        { toolCalls: [{ toolName: "approve", toolCallId: `call-${index}`, input: { what: "x" } }] },
      ]).flat();
    const asker = await createTestRuntime({ agent, storage, clock: time.clock, model: script(100) });
    const answerer = await createTestRuntime({
      agent,
      storage,
      clock: time.clock,
      observers: [(event) => void events.push(event)],
      model: Array.from({ length: 100 }, () => ({ text: "done" })),
    });
    const waker = await createTestRuntime({
      agent,
      storage,
      clock: time.clock,
      observers: [(event) => void events.push(event)],
      model: Array.from({ length: 100 }, () => ({ text: "done" })),
    });
    open.push(asker, answerer, waker);
    const threads: Array<{ threadId: string; actionId: string }> = [];
    for (let index = 0; index < 100; index++) {
      const threadId = await asker.createThread();
      const waiting = await asker.send(threadId, "go");
      threads.push({ threadId, actionId: waiting.actions[0]!.actionId });
    }
    time.set("2030-01-07T08:01:00.000Z");
    const outcomes = await Promise.all(
      threads.map(async ({ threadId, actionId }, index) => {
        // Each side starts a little ahead in turn (0 to 2 ms), so both win some races.
        const lead = () => new Promise((resolve) => setTimeout(resolve, index % 3));
        if (index % 2 === 0) await lead();
        const answer = answerer.pai.service.actions
          .submit({
            identity: answerer.identity as never,
            threadId,
            actionId,
            payload: { approved: true },
          } as never)
          .then(
            () => "answered" as const,
            (error: unknown) => (code("CONFLICT")(error) ? ("conflict" as const) : Promise.reject(error)),
          );
        const wake = (index % 2 === 1 ? lead() : Promise.resolve()).then(() =>
          internalsOf(waker.pai).wake(threadId),
        );
        await Promise.all([answer, wake]);
        return answer;
      }),
    );
    await waker.pai.recover({ limit: 200 });
    for (const { threadId } of threads) {
      await answerer.pai.waitForIdle(threadId);
      await waker.pai.waitForIdle(threadId);
    }
    let answered = 0;
    let expired = 0;
    for (const [index, { threadId, actionId }] of threads.entries()) {
      const snapshot = (await storage.loadThread({ threadId }))!;
      const action = snapshot.actions.find((row) => row.actionId === actionId)!;
      expect(["submitted", "cancelled"]).toContain(action.state);
      // The answer's caller and the stored state agree on who won.
      expect(outcomes[index]).toBe(action.state === "submitted" ? "answered" : "conflict");
      if (action.state === "submitted") answered++;
      else expired++;
      expect(
        events.filter((event) => event.type === "action-resolved" && event.actionId === actionId),
      ).toHaveLength(1);
    }
    // Both sides won some races: they were real races.
    expect(answered).toBeGreaterThan(0);
    expect(expired).toBeGreaterThan(0);
  });
});
