import { createMemoryNotifier, defineAgent, defineTool } from "@pai/core";
import type { ScriptedStep } from "@pai/core/testing";
import { memoryStorage } from "@pai/storage-memory";
import { afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { sharedQueue } from "../dispatch/shared-queue.js";
import { createTestRuntime } from "../support/test-runtime.js";
import { approvalTool, deferred, rejection } from "./_helpers.js";

const approve = approvalTool;

const approveThenText = [
  { toolCalls: [{ toolName: "approve", toolCallId: "call-1", input: { summary: "Ship v2" } }] },
  { text: "Shipped." },
];

/** A tool that runs until its gate opens: a run that is still going when a wait ends. */
function gatedTool() {
  const gate = deferred();
  const slow = defineTool({
    id: "test.wait.slow.v1",
    description: "Takes its time",
    inputSchema: z.object({}),
    outputSchema: z.object({ ok: z.boolean() }),
    execute: async () => {
      await gate.promise;
      return { ok: true };
    },
  });
  return { gate, slow };
}

const cleanup: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const step of cleanup.splice(0).reverse()) await step();
});

/**
 * Two servers on one database: an API instance and a job-engine worker that drives the runs, on
 * one storage and a notifier that announces every commit to both (as postgresNotifier does).
 */
async function apiAndWorker(agent: ReturnType<typeof defineAgent>, model: ScriptedStep[]) {
  const storage = memoryStorage();
  const queue = sharedQueue();
  const notifier = createMemoryNotifier();
  const api = await createTestRuntime({ agent, storage, notifier, model: [], dispatch: queue.dispatch() });
  const worker = await createTestRuntime({ agent, storage, notifier, model, dispatch: queue.dispatch() });
  cleanup.push(queue.close, api.close, worker.close);
  const running = await worker.pai.startWorker({ concurrency: 2 });
  cleanup.push(() => running.stop());
  return { api, worker };
}

describe("waitMs: answering once the run has stopped", () => {
  it("create with a first message answers the parked run's pending action; submit answers the finished run", async () => {
    const t = await createTestRuntime({ agent: defineAgent({ tools: { approve } }), model: approveThenText });
    cleanup.push(t.close);
    const created = await t.pai.service.threads.create({
      identity: t.identity,
      message: { text: "ship it" },
      waitMs: 5_000,
    });
    expect(created.settled?.done).toBe(true);
    const parked = created.settled!.snapshot;
    expect(parked.runs.map((run) => run.status)).toEqual(["waiting"]);
    const [action] = parked.actions.filter((candidate) => candidate.state === "pending");
    expect(action).toMatchObject({ name: "approve.approval", input: { prompt: "Ship v2" } });
    // What it answered is what a read shows.
    expect(parked).toEqual(await t.snapshot(created.threadId));

    const answered = await t.pai.service.actions.submit({
      identity: t.identity,
      threadId: created.threadId,
      actionId: action!.actionId,
      payload: { approved: true },
      waitMs: 5_000,
    });
    expect(answered.settled?.done).toBe(true);
    expect(answered.settled!.snapshot.runs.map((run) => run.status)).toEqual(["completed"]);
    expect(answered.settled!.snapshot).toEqual(await t.snapshot(created.threadId));
    expect(await t.lastText(created.threadId)).toBe("Shipped.");
    // The answer is the caller's copy: changing it changes nothing the runtime keeps.
    answered.settled!.snapshot.messages.length = 0;
    expect((await t.snapshot(created.threadId)).messages.length).toBeGreaterThan(0);
  });

  it("send answers the completed run; a call without waitMs answers at once, as before", async () => {
    const t = await createTestRuntime({
      agent: defineAgent({ tools: {} }),
      model: [{ text: "One." }, { text: "Two." }],
    });
    cleanup.push(t.close);
    const threadId = await t.createThread();
    const sent = await t.pai.service.threads.send({
      identity: t.identity,
      threadId,
      message: { text: "hi" },
      waitMs: 5_000,
    });
    expect(sent.settled?.done).toBe(true);
    expect(sent.settled!.snapshot.runs.map((run) => run.status)).toEqual(["completed"]);
    const quick = await t.pai.service.threads.send({
      identity: t.identity,
      threadId,
      message: { text: "again" },
    });
    expect(quick).not.toHaveProperty("settled");
    await t.waitForIdle(threadId);
  });

  it("answers done: false with the thread as it stands when waitMs passes first", async () => {
    const { gate, slow } = gatedTool();
    const t = await createTestRuntime({
      agent: defineAgent({ tools: { slow } }),
      model: [{ toolCalls: [{ toolName: "slow", toolCallId: "call-1", input: {} }] }, { text: "Done." }],
    });
    cleanup.push(t.close);
    const threadId = await t.createThread();
    const started = performance.now();
    const sent = await t.pai.service.threads.send({
      identity: t.identity,
      threadId,
      message: { text: "go" },
      waitMs: 50,
    });
    expect(performance.now() - started).toBeGreaterThanOrEqual(45);
    expect(sent.settled?.done).toBe(false);
    expect(sent.settled!.snapshot.runs.map((run) => run.status)).toEqual(["running"]);
    gate.resolve();
    await t.waitForIdle(threadId);
    expect((await t.lastRun(threadId))?.status).toBe("completed");
  });

  it("a signal that aborts ends the wait early with done: false; the write stays and the watch slot is free again", async () => {
    const { gate, slow } = gatedTool();
    const t = await createTestRuntime({
      agent: defineAgent({ tools: { slow } }),
      model: [
        { toolCalls: [{ toolName: "slow", toolCallId: "call-1", input: {} }] },
        { text: "Hi." },
        { text: "Done." },
      ],
      maxWatchesPerUser: 1,
    });
    cleanup.push(t.close);
    cleanup.push(async () => gate.resolve());
    const controller = new AbortController();
    const started = performance.now();
    const creating = t.pai.service.threads.create({
      identity: t.identity,
      message: { text: "go" },
      waitMs: 30_000,
      signal: controller.signal,
    });
    setTimeout(() => controller.abort(), 30);
    const created = await creating;
    expect(performance.now() - started).toBeLessThan(5_000);
    expect(created.settled?.done).toBe(false);
    expect(created.settled!.snapshot.runs.map((run) => run.status)).toEqual(["running"]);
    // The one slot is free again: another waiting call is let in; a signal aborted already ends
    // its wait at once, after the write.
    const again = await t.pai.service.threads.create({
      identity: t.identity,
      message: { text: "hello" },
      waitMs: 30_000,
      signal: AbortSignal.abort(),
    });
    expect(again.settled).toBeDefined();
    await t.waitForIdle(again.threadId);
    expect(await t.lastText(again.threadId)).toBe("Hi.");
    gate.resolve();
    await t.waitForIdle(created.threadId);
    expect((await t.lastRun(created.threadId))?.status).toBe("completed");
  });

  it("refuses a signal that is not an AbortSignal before writing", async () => {
    const t = await createTestRuntime({ agent: defineAgent({ tools: {} }), model: [] });
    cleanup.push(t.close);
    const threadId = await t.createThread();
    const refused = await rejection(
      t.pai.service.threads.send({
        identity: t.identity,
        threadId,
        message: { text: "x" },
        waitMs: 1_000,
        signal: { aborted: false },
      } as never),
    );
    expect(refused.code).toBe("INVALID_INPUT");
    expect(refused.message).toContain("AbortSignal");
    expect((await t.snapshot(threadId)).messages).toEqual([]);
  });

  it("answering one of two pending actions answers at once: the run still waits on the other", async () => {
    const t = await createTestRuntime({
      agent: defineAgent({ tools: { approve } }),
      model: [
        {
          toolCalls: [
            { toolName: "approve", toolCallId: "call-1", input: { summary: "one" } },
            { toolName: "approve", toolCallId: "call-2", input: { summary: "two" } },
          ],
        },
        { text: "Both." },
      ],
    });
    cleanup.push(t.close);
    const threadId = await t.createThread();
    const waiting = await t.send(threadId, "ship both");
    const [first] = waiting.actions;
    const answered = await t.pai.service.actions.submit({
      identity: t.identity,
      threadId,
      actionId: first!.actionId,
      payload: { approved: true },
      waitMs: 5_000,
    });
    expect(answered.settled?.done).toBe(true);
    expect(answered.settled!.snapshot.runs.map((run) => run.status)).toEqual(["waiting"]);
    expect(answered.settled!.snapshot.actions.map((action) => action.state)).toEqual([
      "submitted",
      "pending",
    ]);
  });

  it("refuses a waitMs out of range, and waitMs on create without a message, writing nothing", async () => {
    const t = await createTestRuntime({ agent: defineAgent({ tools: {} }), model: [] });
    cleanup.push(t.close);
    const threadId = await t.createThread();
    for (const waitMs of [0, -1, 1.5, 60_001, Number.NaN, "10"]) {
      const sent = await rejection(
        t.pai.service.threads.send({
          identity: t.identity,
          threadId,
          message: { text: "x" },
          waitMs,
        } as never),
      );
      expect(sent.code, String(waitMs)).toBe("INVALID_INPUT");
      const created = await rejection(
        t.pai.service.threads.create({ identity: t.identity, message: { text: "x" }, waitMs } as never),
      );
      expect(created.code, String(waitMs)).toBe("INVALID_INPUT");
    }
    const bare = await rejection(t.pai.service.threads.create({ identity: t.identity, waitMs: 100 }));
    expect(bare.message).toContain("waitMs");
    expect((await t.snapshot(threadId)).messages).toEqual([]);
    expect((await t.pai.service.threads.list({ identity: t.identity })).items).toHaveLength(1);
  });

  it("waits across processes: a worker of a job engine drives the run, the API instance answers when it stops", async () => {
    const { api, worker } = await apiAndWorker(defineAgent({ tools: { approve } }), approveThenText);
    const created = await api.pai.service.threads.create({
      identity: api.identity,
      message: { text: "ship it" },
      waitMs: 5_000,
    });
    expect(created.settled?.done).toBe(true);
    expect(created.settled!.snapshot.runs.map((run) => run.status)).toEqual(["waiting"]);
    const action = created.settled!.snapshot.actions[0]!;
    const answered = await api.pai.service.actions.submit({
      identity: api.identity,
      threadId: created.threadId,
      actionId: action.actionId,
      payload: { approved: true },
      waitMs: 5_000,
    });
    expect(answered.settled?.done).toBe(true);
    expect(answered.settled!.snapshot.runs.map((run) => run.status)).toEqual(["completed"]);
    expect((worker.model as any).calls).toHaveLength(2);
  });

  it("a signal that aborts while the call follows a run another process drives ends the wait", async () => {
    const { gate, slow } = gatedTool();
    const steps = [{ toolCalls: [{ toolName: "slow", toolCallId: "call-1", input: {} }] }, { text: "Done." }];
    const { api, worker } = await apiAndWorker(defineAgent({ tools: { slow } }), steps);
    cleanup.push(async () => gate.resolve());
    const controller = new AbortController();
    const creating = api.pai.service.threads.create({
      identity: api.identity,
      message: { text: "go" },
      waitMs: 30_000,
      signal: controller.signal,
    });
    // The worker is running the tool: the API instance is following the thread as a watcher.
    while ((worker.model as any).calls.length === 0) await new Promise((resolve) => setTimeout(resolve, 5));
    await new Promise((resolve) => setTimeout(resolve, 20));
    const aborted = performance.now();
    controller.abort();
    const created = await creating;
    expect(performance.now() - aborted).toBeLessThan(2_000);
    expect(created.settled?.done).toBe(false);
    expect(created.settled!.snapshot.runs.map((run) => run.status)).toEqual(["running"]);
    gate.resolve();
    await worker.waitForIdle(created.threadId);
  });

  it("a wait that fails after the commit answers without settled (a retry would write again) and reports the error", async () => {
    const inner = memoryStorage();
    let failReads = false;
    const storage = {
      ...inner,
      loadThread: async (input: Parameters<typeof inner.loadThread>[0]) => {
        if (failReads) throw new Error("storage went away");
        return inner.loadThread(input);
      },
    };
    const reports: Array<{ phase: string; threadId?: string }> = [];
    const queue = sharedQueue();
    // Runs go to a job engine nobody works, so the wait has to read the thread.
    const api = await createTestRuntime({
      agent: defineAgent({ tools: { approve } }),
      storage,
      model: [],
      dispatch: queue.dispatch(),
      onRuntimeError: (report) => reports.push(report),
    });
    cleanup.push(queue.close, api.close);
    failReads = true;
    const created = await api.pai.service.threads.create({
      identity: api.identity,
      message: { text: "ship it" },
      waitMs: 1_000,
    });
    failReads = false;
    expect(created).not.toHaveProperty("settled");
    expect(created.status).toBe("running");
    expect(reports).toEqual([expect.objectContaining({ phase: "request", threadId: created.threadId })]);
    expect((await api.snapshot(created.threadId)).messages).toHaveLength(1);
  });
});
