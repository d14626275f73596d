import { defineAgent, defineTool, PaiError } from "@pai/core";
import { createTestRuntime, scriptedModel } from "@pai/core/testing";
import { memoryStorage } from "@pai/storage-memory";
import { afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { sharedQueue } from "./shared-queue.js";

const lookup = defineTool({
  id: "test.lookup.v1",
  description: "Looks a value up",
  inputSchema: z.object({ key: z.string() }),
  outputSchema: z.object({ value: z.string() }),
  execute: async ({ input }) => ({ value: `value of ${input.key}` }),
});
const agent = defineAgent({ tools: { lookup } });
const twoSteps = () => [
  { toolCalls: [{ toolName: "lookup", toolCallId: "call-1", input: { key: "a" } }] },
  { text: "Done." },
];

/** A user message through the API instance's service, as a client's request would send it. */
async function sendFrom(api: { pai: any; identity: unknown }, threadId: string, text: string): Promise<void> {
  await api.pai.service.threads.send({ identity: api.identity, threadId, message: { text } });
}

async function until(check: () => Promise<boolean> | boolean, what: string, timeoutMs = 5_000) {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`Timed out waiting for ${what}.`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

describe("API and worker roles on a job engine", () => {
  const cleanup: Array<() => Promise<void>> = [];
  afterEach(async () => {
    for (const step of cleanup.splice(0).reverse()) await step();
  });

  it("an API instance commits and dispatches; only the worker calls the model and runs tools", async () => {
    const storage = memoryStorage();
    const queue = sharedQueue();
    const api = await createTestRuntime({ agent, storage, model: [], dispatch: queue.dispatch() });
    const worker = await createTestRuntime({ agent, storage, model: twoSteps(), dispatch: queue.dispatch() });
    cleanup.push(queue.close, api.close, worker.close);
    const threadId = await api.createThread();
    await sendFrom(api, threadId, "look a up");
    // Nobody works the queue yet: the run waits, running and unleased, with its job sent.
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect((await api.snapshot(threadId)).runs[0]?.status).toBe("running");
    expect(queue.sent).toEqual([expect.objectContaining({ kind: "run", threadId })]);
    const running = await worker.pai.startWorker({ concurrency: 2 });
    cleanup.push(() => running.stop());
    await until(
      async () => (await api.snapshot(threadId)).runs[0]?.status === "completed",
      "the run to complete",
    );
    expect((worker.model as any).calls).toHaveLength(2);
    const snapshot = await api.snapshot(threadId);
    const parts = snapshot.messages.at(-1)!.message.parts as Array<{ type: string; output?: unknown }>;
    expect(parts.filter((part) => part.type === "tool-lookup")).toEqual([
      expect.objectContaining({ output: { value: "value of a" } }),
    ]);
  });

  it("a delivery of a run another instance holds is acknowledged, not driven twice", async () => {
    const storage = memoryStorage();
    const queue = sharedQueue();
    const api = await createTestRuntime({ agent, storage, model: [], dispatch: queue.dispatch() });
    let later = 0;
    const worker = await createTestRuntime({
      agent,
      storage,
      model: twoSteps(),
      dispatch: queue.dispatch(),
      clock: () => new Date(Date.now() + later),
    });
    cleanup.push(queue.close, api.close, worker.close);
    const threadId = await api.createThread();
    await sendFrom(api, threadId, "go");
    const runId = (await api.snapshot(threadId)).runs[0]!.runId;
    // Another instance holds the run: the worker leaves it alone.
    expect(
      await storage.acquireRunLease({
        threadId,
        runId,
        owner: "someone-else",
        now: new Date().toISOString(),
        expiresAt: new Date(Date.now() + 60_000).toISOString(),
      }),
    ).toBe(true);
    const running = await worker.pai.startWorker({ recoveryIntervalMs: 60_000 });
    cleanup.push(() => running.stop());
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect((worker.model as any).calls).toHaveLength(0);
    expect(running.active).toBe(0);
    // Its holder died: once the run has made no progress for a lease length, recovery sends it again.
    await storage.releaseRunLease({ threadId, runId, owner: "someone-else" });
    await worker.pai.recover();
    expect(queue.sent.filter((job) => job.kind === "run")).toHaveLength(1);
    later = 31_000;
    await worker.pai.recover();
    await worker.pai.recover();
    expect(queue.sent.filter((job) => job.kind === "run")).toHaveLength(2);
    await until(
      async () => (await api.snapshot(threadId)).runs[0]?.status === "completed",
      "the adopted run",
    );
    expect((worker.model as any).calls).toHaveLength(2);
  });

  it("keeps a scope within maxPerScope, so another tenant's run is not starved", async () => {
    const storage = memoryStorage();
    const queue = sharedQueue();
    const gates: Array<() => void> = [];
    const slow = defineTool({
      id: "test.slow.v1",
      description: "Waits for the test",
      inputSchema: z.object({}),
      outputSchema: z.object({ ok: z.boolean() }),
      execute: () => new Promise<{ ok: boolean }>((resolve) => gates.push(() => resolve({ ok: true }))),
    });
    const slowAgent = defineAgent({ tools: { slow } });
    // Each run calls the tool once, then answers: what a call gets depends on its own prompt.
    const script = scriptedModel((call) =>
      call.prompt.some((message) => message.role === "tool")
        ? { text: "ok" }
        : { toolCalls: [{ toolName: "slow", input: {} }] },
    );
    const api = await createTestRuntime({ agent: slowAgent, storage, model: [], dispatch: queue.dispatch() });
    const worker = await createTestRuntime({
      agent: slowAgent,
      storage,
      model: script,
      dispatch: queue.dispatch(),
    });
    cleanup.push(queue.close, api.close, worker.close);
    const load = async (threadId: string) => (await storage.loadThread({ threadId }))!;
    const busy = { scopeKey: "busy-tenant", userKey: "u" };
    const quiet = { scopeKey: "quiet-tenant", userKey: "u" };
    const threads: Array<{ threadId: string; identity: typeof busy }> = [];
    for (const identity of [busy, busy, busy, quiet]) {
      const thread = await api.pai.service.threads.create({ identity } as never);
      threads.push({ threadId: (thread as { threadId: string }).threadId, identity });
    }
    for (const { threadId, identity } of threads) {
      await api.pai.service.threads.send({ identity, threadId, message: { text: "go" } } as never);
    }
    const running = await worker.pai.startWorker({
      concurrency: 3,
      maxPerScope: 2,
      recoveryIntervalMs: 60_000,
    });
    cleanup.push(async () => {
      for (const open of gates.splice(0)) open();
      await running.stop();
    });
    await until(() => gates.length >= 3, "three runs in their tool");
    const quietRun = (await load(threads[3]!.threadId)).runs[0]!;
    expect((worker.model as any).calls.length).toBe(3);
    // Two busy-tenant runs and the quiet tenant's run hold the three slots; the third busy run waits.
    expect(quietRun.step).toBe(1);
    let busySteps = 0;
    for (const { threadId } of threads.slice(0, 3)) busySteps += (await load(threadId)).runs[0]!.step;
    expect(busySteps).toBe(2);
    // Once a busy run finishes, the waiting one gets its turn.
    gates.shift()!();
    await until(() => gates.length >= 3, "the third busy run in its tool");
  });

  it("stop() hands back a run still going after drainMs: not failed, lease free, job delivered again", async () => {
    const storage = memoryStorage();
    const queue = sharedQueue();
    let release!: () => void;
    const stuck = defineTool({
      id: "test.stuck.v1",
      description: "Waits until released or aborted",
      inputSchema: z.object({}),
      outputSchema: z.object({ ok: z.boolean() }),
      execute: ({ signal }) =>
        new Promise<{ ok: boolean }>((resolve, reject) => {
          release = () => resolve({ ok: true });
          signal.addEventListener("abort", () => reject(signal.reason));
        }),
    });
    const stuckAgent = defineAgent({ tools: { stuck } });
    const api = await createTestRuntime({
      agent: stuckAgent,
      storage,
      model: [],
      dispatch: queue.dispatch(),
    });
    const first = await createTestRuntime({
      agent: stuckAgent,
      storage,
      model: [{ toolCalls: [{ toolName: "stuck", toolCallId: "c-1", input: {} }] }],
      dispatch: queue.dispatch(),
    });
    cleanup.push(queue.close, api.close);
    const threadId = await api.createThread();
    await sendFrom(api, threadId, "go");
    const worker = await first.pai.startWorker({ drainMs: 100, recoveryIntervalMs: 60_000 });
    await until(async () => (await api.snapshot(threadId)).runs[0]?.step === 1, "the tool call to start");
    const sentBefore = queue.sent.length;
    await worker.stop();
    void release;
    const run = (await api.snapshot(threadId)).runs[0]!;
    expect(run.status).toBe("running");
    // The lease is free: any instance may take the run now.
    expect(
      await storage.acquireRunLease({
        threadId,
        runId: run.runId,
        owner: "probe",
        now: new Date().toISOString(),
        expiresAt: new Date(Date.now() + 1).toISOString(),
      }),
    ).toBe(true);
    await first.close();
    expect(queue.sent.length).toBeGreaterThanOrEqual(sentBefore);
  });

  it("an answer taken by an API instance re-enters the suspended tool in the worker, once", async () => {
    const storage = memoryStorage();
    const queue = sharedQueue();
    const entries: Array<{ where: string; entry: string; resume?: unknown }> = [];
    const approvalAgent = (where: string) =>
      defineAgent({
        tools: {
          approve: defineTool({
            id: "test.roles-approve.v1",
            description: "Asks for approval",
            inputSchema: z.object({ what: z.string() }),
            outputSchema: z.object({ approved: z.boolean(), by: z.string() }),
            suspend: {
              approval: {
                suspendSchema: z.object({ what: z.string() }),
                // The transform proves the worker parses the stored answer again.
                resumeSchema: z
                  .object({ approved: z.boolean() })
                  .transform((value) => ({ ...value, parsed: true })),
              },
            },
            execute: (ctx) => {
              entries.push({
                where,
                entry: ctx.entry.type,
                ...(ctx.entry.type === "resume" ? { resume: ctx.entry.resume } : {}),
              });
              return ctx.entry.type === "initial"
                ? ctx.suspend("approval", { what: ctx.input.what })
                : { approved: ctx.entry.resume.approved, by: where };
            },
          }),
        },
      });
    const api = await createTestRuntime({
      agent: approvalAgent("api"),
      storage,
      model: [],
      dispatch: queue.dispatch(),
    });
    const worker = await createTestRuntime({
      agent: approvalAgent("worker"),
      storage,
      dispatch: queue.dispatch(),
      model: [
        { toolCalls: [{ toolName: "approve", toolCallId: "call-1", input: { what: "post" } }] },
        { text: "Approved and published." },
      ],
    });
    cleanup.push(queue.close, api.close, worker.close);
    const running = await worker.pai.startWorker({ recoveryIntervalMs: 60_000 });
    cleanup.push(() => running.stop());
    const threadId = await api.createThread();
    await sendFrom(api, threadId, "go");
    await until(async () => (await api.snapshot(threadId)).runs[0]?.status === "waiting", "the run to wait");
    const actionId = (await api.snapshot(threadId)).actions[0]!.actionId;
    await api.pai.service.actions.submit({
      identity: api.identity as never,
      threadId,
      actionId,
      payload: { approved: true },
    } as never);
    await until(
      async () => (await api.snapshot(threadId)).runs[0]?.status === "completed",
      "the run to complete",
    );
    expect(entries).toEqual([
      { where: "worker", entry: "initial" },
      { where: "worker", entry: "resume", resume: { approved: true, parsed: true } },
    ]);
    const snapshot = await api.snapshot(threadId);
    expect(snapshot.actions[0]).toMatchObject({ state: "submitted", resumeQueued: false });
    const part = (snapshot.messages.at(-1)!.message.parts as Array<{ type: string; output?: unknown }>).find(
      (candidate) => candidate.type === "tool-approve",
    );
    expect(part?.output).toEqual({ approved: true, by: "worker" });
  });

  it("refuses bad worker options", async () => {
    const queue = sharedQueue();
    const runtime = await createTestRuntime({
      agent,
      storage: memoryStorage(),
      model: [],
      dispatch: queue.dispatch(),
    });
    cleanup.push(queue.close, runtime.close);
    for (const bad of [
      { concurrency: 0 },
      { concurrency: 1.5 },
      { maxPerScope: 50, concurrency: 2 },
      { drainMs: -1 },
    ]) {
      await expect(runtime.pai.startWorker(bad)).rejects.toSatisfy(
        (error: unknown) => PaiError.isInstance(error) && error.code === "INVALID_DEFINITION",
      );
    }
  });
});
