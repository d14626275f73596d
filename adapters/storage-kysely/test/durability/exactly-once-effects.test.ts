import type { ActionResult, ActionRow, ClientToolSnapshot, ThreadSnapshot } from "@pai/core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { kyselyStorage, migrateToLatest, tableNames } from "../../src/index.js";
import { openEngine } from "../support/engines.js";
import { EffectsProcess } from "./effects-process.js";
import { assertChildProcessesCanRun, type WorkerEvent, WorkerRequestError } from "./worker-process.js";

/** Submits per process per round (tests 1 and 2). */
const PER_PROCESS = 8;
const ROUNDS = 2;
/** Lease of the runtimes in the lease-fence test; the others use a lease no test outlasts. */
const FENCE_LEASE_MS = 300;
/** How long the stalled process blocks its event loop: adoption must happen well within it. */
const STALL_MS = 2_000;
/** The adopter's own tool call: still running (lease held) when the stalled process wakes. */
const WORK_MS = 2_500;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

type ToolPart = { type: string; toolCallId: string; state: string; output?: unknown; errorText?: string };

const toolParts = (snapshot: ThreadSnapshot): ToolPart[] =>
  snapshot.messages.flatMap((row) =>
    (row.message.parts as ToolPart[]).filter((part) => typeof part.toolCallId === "string"),
  );

const codeOf = (reason: unknown) =>
  reason instanceof WorkerRequestError ? reason.code : `UNEXPECTED: ${String(reason)}`;

/**
 * Side effects that must happen once per tool call, across two runtime processes on one
 * Postgres: output observers, idempotent retries, tool data of a process that lost its run
 * lease, and answers to frontend-defined client tools from another process.
 */
describe("exactly-once effects across two runtime processes on Postgres", async () => {
  const engine = await openEngine("postgres", "dur_effects");
  if ("skip" in engine) {
    it.skip(`skipped: ${engine.skip}`, () => {});
    return;
  }
  const { db, prefix } = engine;
  /** The lease-fence test's own tables, so its short-lease recovery sees no other test's runs. */
  const fencePrefix = `${prefix}fence_`;
  const storage = kyselyStorage({ db, tablePrefix: prefix });
  const fenceStorage = kyselyStorage({ db, tablePrefix: fencePrefix });
  const a = new EffectsProcess({ instanceId: "proc-a" });
  const b = new EffectsProcess({ instanceId: "proc-b" });
  const workers = [a, b];

  beforeAll(async () => {
    assertChildProcessesCanRun();
    await migrateToLatest(db, { tablePrefix: prefix });
    await migrateToLatest(db, { tablePrefix: fencePrefix });
    await Promise.all(workers.map((worker) => worker.ready()));
    for (const worker of workers) {
      await worker.request("open", { prefix, leaseMs: 5_000 });
      await worker.request("open", {
        prefix: fencePrefix,
        leaseMs: FENCE_LEASE_MS,
        stallMs: STALL_MS,
        workMs: WORK_MS,
      });
    }
  });

  afterAll(async () => {
    await Promise.all(workers.map((worker) => worker.stop()));
    for (const table of Object.values(tableNames(fencePrefix))) {
      await db.schema.dropTable(table).ifExists().execute();
    }
    await engine.dispose();
  });

  async function settled(threadId: string, from = storage, timeoutMs = 15_000): Promise<ThreadSnapshot> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const snapshot = (await from.loadThread({ threadId }))!;
      const run = snapshot.runs.at(-1);
      if (run && ["completed", "failed", "cancelled"].includes(run.status)) return snapshot;
      if (Date.now() > deadline) throw new Error(`thread ${threadId} did not settle: run ${run?.status}`);
      await sleep(25);
    }
  }

  /** Starts a run on `owner` and waits until it parks on its pending actions. */
  async function parked(
    owner: EffectsProcess,
    threadId: string,
    plan: string[][],
    clientTools?: ClientToolSnapshot[],
  ): Promise<ActionRow[]> {
    await owner.request("create", { prefix, threadId });
    await owner.request("send", { prefix, threadId, plan, ...(clientTools ? { clientTools } : {}) });
    await owner.request("idle", { prefix, threadId });
    const snapshot = await owner.request<ThreadSnapshot>("get", { prefix, threadId });
    expect(snapshot.runs.map((run) => run.status)).toEqual(["waiting"]);
    return snapshot.actions.filter((action) => action.state === "pending");
  }

  /** Hook calls both processes reported for one tool call. */
  const hookCalls = (toolCallId: string, hook: string) =>
    workers.flatMap((worker) =>
      worker.events
        .filter((event) => event.kind === "hook" && event.hook === hook && event.toolCallId === toolCallId)
        .map((event) => ({ instance: event.instance, output: event.output })),
    );

  it(`1. an output action submitted ${PER_PROCESS}x from each process with different payloads: one accepted, the rest CONFLICT, onOutput and afterToolResult run once with the winner's payload (${ROUNDS} rounds)`, async () => {
    const summary: string[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      const threadId = `output-race-${round}`;
      const [first, second] = round % 2 === 0 ? [a, b] : [b, a];
      const pending = await parked(first, threadId, [["answer"]]);
      expect(pending.map((action) => action.name)).toEqual(["answer.output"]);
      const action = pending[0]!;

      const requests = (worker: EffectsProcess) =>
        Array.from({ length: PER_PROCESS }, (_, index) => ({
          op: "submit",
          args: {
            prefix,
            threadId,
            actionId: action.actionId,
            payload: { choice: `${worker.instanceId}-${index}` },
          },
        }));
      // Whichever process is written to first has a head start of microseconds; alternate it.
      const fromFirst = first.requestMany<ActionResult>(requests(first));
      const fromSecond = second.requestMany<ActionResult>(requests(second));
      const outcomes = await Promise.allSettled([...fromFirst, ...fromSecond]);

      const accepted = outcomes.flatMap((outcome) => (outcome.status === "fulfilled" ? [outcome.value] : []));
      const codes = outcomes.flatMap((outcome) =>
        outcome.status === "rejected" ? [codeOf(outcome.reason)] : [],
      );
      expect(accepted).toHaveLength(1);
      expect(codes).toEqual(Array.from({ length: 2 * PER_PROCESS - 1 }, () => "CONFLICT"));
      const winner = accepted[0]!.action;
      expect(winner).toMatchObject({ actionId: action.actionId, state: "submitted" });
      const winnerPayload = winner.resume as { choice: string };

      const done = await settled(threadId);
      expect(done.runs.map((run) => run.status)).toEqual(["completed"]);
      expect(toolParts(done).find((part) => part.toolCallId === action.toolCallId)).toMatchObject({
        state: "output-available",
        output: winnerPayload,
      });
      // Observers that a fixed runtime might run after the commit have had time to report.
      await sleep(250);
      const calls = {
        onOutput: hookCalls(action.toolCallId, "onOutput"),
        afterToolResult: hookCalls(action.toolCallId, "afterToolResult"),
      };
      summary.push(
        `round ${round + 1}: accepted ${winnerPayload.choice}; onOutput ran ${calls.onOutput.length}x, afterToolResult ${calls.afterToolResult.length}x (${calls.onOutput.filter((call) => call.output && (call.output as { choice: string }).choice !== winnerPayload.choice).length} with a losing payload)`,
      );
      console.log(`[durability] output observers: ${summary.at(-1)}`);
      const seen = (list: typeof calls.onOutput) =>
        list.map((call) => `${(call.output as { choice?: string } | null)?.choice} (in ${call.instance})`);
      expect({ onOutput: seen(calls.onOutput), afterToolResult: seen(calls.afterToolResult) }).toEqual({
        onOutput: [expect.stringMatching(new RegExp(`^${winnerPayload.choice} `))],
        afterToolResult: [expect.stringMatching(new RegExp(`^${winnerPayload.choice} `))],
      });
    }
  });

  it(`2. retries with one idempotency key, ${PER_PROCESS}x from each process at once: every request gets the winner's result (${ROUNDS} rounds)`, async () => {
    for (let round = 0; round < ROUNDS; round++) {
      const threadId = `idempotent-race-${round}`;
      const [first, second] = round % 2 === 0 ? [a, b] : [b, a];
      const pending = await parked(first, threadId, [["answer"]]);
      const action = pending[0]!;
      const idempotencyKey = `retry-${round}`;
      const payload = { choice: "retried" };
      const request = {
        op: "submit",
        args: { prefix, threadId, actionId: action.actionId, payload, idempotencyKey },
      };
      const copies = Array.from({ length: PER_PROCESS }, () => request);
      const fromFirst = first.requestMany<ActionResult>(copies);
      const fromSecond = second.requestMany<ActionResult>(copies);
      const outcomes = await Promise.allSettled([...fromFirst, ...fromSecond]);

      const done = await settled(threadId);
      expect(done.runs.map((run) => run.status)).toEqual(["completed"]);
      const stored = done.actions.find((item) => item.actionId === action.actionId)!;
      expect(stored).toMatchObject({ state: "submitted", resume: payload, idempotencyKey });
      const describeResult = (action: ActionRow, version: number | null | undefined) =>
        `${action.state} ${JSON.stringify(action.resume)} key=${action.idempotencyKey} v${version}`;
      const winnerResult = describeResult(stored, stored.resolvedVersion);
      const results = outcomes.map((outcome) =>
        outcome.status === "fulfilled"
          ? describeResult(outcome.value.action, outcome.value.version)
          : codeOf(outcome.reason),
      );
      const rejected = outcomes.flatMap((outcome) =>
        outcome.status === "rejected" ? [codeOf(outcome.reason)] : [],
      );
      console.log(
        `[durability] idempotent retries round ${round + 1}: ${results.length - rejected.length}/${results.length} succeeded, rejected: ${rejected.join(", ") || "none"}`,
      );
      expect(results.length - rejected.length).toBeGreaterThanOrEqual(1);
      expect(results).toEqual(Array.from({ length: 2 * PER_PROCESS }, () => winnerResult));
    }
  });

  it("3. a process that lost its run lease cannot write tool data once another process adopted the run", async () => {
    const threadId = "fence";
    const isThread = (event: WorkerEvent) => event.threadId === threadId;
    await a.request("create", { prefix: fencePrefix, threadId });
    await a.request("send", { prefix: fencePrefix, threadId, plan: [["stall"], ["work"]] });
    // proc-a's stall tool writes "before" under its lease, then blocks its event loop for STALL_MS.
    const before = await a.waitForEvent(
      (event) => isThread(event) && event.kind === "data-write" && event.phase === "before",
    );
    await sleep(FENCE_LEASE_MS + 150);
    expect(await b.request("recover", { prefix: fencePrefix })).toBe(1);
    // Adopted: proc-b settled the interrupted stall call.
    const deadline = Date.now() + 10_000;
    for (;;) {
      const snapshot = (await fenceStorage.loadThread({ threadId }))!;
      const part = toolParts(snapshot).find((item) => item.toolCallId === before.toolCallId);
      if (part?.state === "output-error") break;
      if (Date.now() > deadline) throw new Error(`proc-b never adopted the run: stall call ${part?.state}`);
      await sleep(10);
    }
    const adoptedAt = Date.now();

    const after = await a.waitForEvent(
      (event) => isThread(event) && event.kind === "data-write" && event.phase === "after",
    );
    const workEnd = await b.waitForEvent(
      (event) => isThread(event) && event.kind === "work" && event.phase === "end",
    );
    const done = await settled(threadId, fenceStorage);
    const rows = done.toolData.map((item) => ({
      toolCallId: item.toolCallId,
      ...(item.value as { phase: string; by: string }),
    }));
    const errors = a.events.filter((event) => event.kind === "runtime-error").map((event) => event.name);
    console.log(
      `[durability] tool data after lease loss: adopted ${(after.wokeAt as number) - adoptedAt} ms before proc-a woke; its late write ${after.ok ? "was committed" : `was refused (${after.code ?? after.name}: ${after.message})`}; tool data rows: ${JSON.stringify(rows)}; proc-a runtime errors: ${errors.join(", ") || "none"}`,
    );

    // The harness: proc-b adopted before proc-a woke, and still held the run when proc-a wrote.
    expect(after.wokeAt as number).toBeGreaterThan(adoptedAt);
    expect(workEnd.at as number).toBeGreaterThan(after.at as number);
    expect(done.runs.map((run) => run.status)).toEqual(["completed"]);
    const work = toolParts(done).find((part) => part.type === "tool-work");
    expect(work).toMatchObject({ state: "output-available", output: { by: "proc-b" } });
    // The write made under the lease stays; nothing proc-a wrote after losing it does.
    expect(rows).toEqual([{ toolCallId: before.toolCallId, phase: "before", by: "proc-a" }]);
  });

  const colorTool: ClientToolSnapshot = {
    name: "pickColor",
    description: "Ask the user for a color",
    inputSchema: { type: "object", properties: { summary: { type: "string" } } },
    outputSchema: {
      type: "object",
      properties: { color: { type: "string", enum: ["red", "green"] } },
      required: ["color"],
      additionalProperties: false,
    },
  };
  const sizeTool: ClientToolSnapshot = {
    name: "pickSize",
    description: "Ask the user for a size",
    inputSchema: { type: "object", properties: { summary: { type: "string" } } },
    outputSchema: {
      type: "object",
      properties: { size: { type: "integer", minimum: 1 } },
      required: ["size"],
      additionalProperties: false,
    },
  };

  /**
   * A run calls two client tools; proc-a answers the first with `answerSnapshot`, then proc-b
   * (an operator without client tools) answers the second, first invalidly, then validly.
   */
  async function answerFromTwoProcesses(threadId: string, answerSnapshot: ClientToolSnapshot[]) {
    const pending = await parked(a, threadId, [["pickColor", "pickSize"]], [colorTool, sizeTool]);
    expect(pending.map((action) => action.name).sort()).toEqual(["pickColor.output", "pickSize.output"]);
    const color = pending.find((action) => action.toolName === "pickColor")!;
    const size = pending.find((action) => action.toolName === "pickSize")!;

    const first = await a.request<ActionResult>("submit", {
      prefix,
      threadId,
      actionId: color.actionId,
      payload: { color: "red" },
      clientTools: answerSnapshot,
    });
    expect(first.action).toMatchObject({ state: "submitted", resume: { color: "red" } });

    const attempt = async (payload: unknown) => {
      try {
        const result = await b.request<ActionResult>("submit", {
          prefix,
          threadId,
          actionId: size.actionId,
          payload,
        });
        return `accepted (${result.action.state})`;
      } catch (error) {
        return codeOf(error);
      }
    };
    const invalid = await attempt({ size: "huge" });
    const valid = await attempt({ size: 3 });
    return { invalid, valid, size };
  }

  it("4a. control: proc-a answers with a snapshot listing both client tools; proc-b's answer to the other is validated against its outputSchema", async () => {
    const outcome = await answerFromTwoProcesses("client-tools-control", [colorTool, sizeTool]);
    expect({ invalid: outcome.invalid, valid: outcome.valid }).toEqual({
      invalid: "INVALID_INPUT",
      valid: "accepted (submitted)",
    });
    const done = await settled("client-tools-control");
    expect(done.runs.map((run) => run.status)).toEqual(["completed"]);
    expect(toolParts(done).find((part) => part.toolCallId === outcome.size.toolCallId)).toMatchObject({
      state: "output-available",
      output: { size: 3 },
    });
  });

  it("4. proc-a answers one client tool with a snapshot listing only that tool; proc-b (no client tools) can still answer the other call, validated against its outputSchema", async () => {
    const threadId = "client-tools-partial";
    const outcome = await answerFromTwoProcesses(threadId, [colorTool]);
    console.log(
      `[durability] client tool answered from another process: invalid payload -> ${outcome.invalid}, valid payload -> ${outcome.valid}`,
    );
    expect({ invalid: outcome.invalid, valid: outcome.valid }).toEqual({
      invalid: "INVALID_INPUT",
      valid: "accepted (submitted)",
    });
    const done = await settled(threadId);
    expect(done.runs.map((run) => run.status)).toEqual(["completed"]);
    expect(toolParts(done).find((part) => part.toolCallId === outcome.size.toolCallId)).toMatchObject({
      state: "output-available",
      output: { size: 3 },
    });
  });
});
