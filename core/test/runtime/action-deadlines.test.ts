import { type DeadlineInput, defineAgent, defineTool, PaiError } from "@pai/core";
import { projectThreadState } from "@pai/core/protocol";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { createTestRuntime } from "../support/test-runtime.js";
import { scripted, toolResultFor } from "./_helpers.js";

// A fixed clock: every deadline is exactly its offset from this instant, and none ever passes.
const NOW = Date.parse("2030-01-01T00:00:00.000Z");
const clock = () => new Date(NOW);
const fromNow = (ms: number) => new Date(NOW + ms).toISOString();
const DEFAULT_REASON = "No answer arrived before the deadline.";

/**
 * A tool with one wait point whose default deadline is 60 s. The call's input picks what the
 * tool passes to `ctx.suspend` as its own deadline option (`"default"`: none, so the point's).
 */
const approve = defineTool({
  id: "test.deadline-approve.v1",
  description: "Ask for approval",
  inputSchema: z.object({ choice: z.enum(["default", "override", "none", "at", "invalid"]) }),
  outputSchema: z.object({ approved: z.boolean() }),
  suspend: {
    approval: {
      suspendSchema: z.object({ prompt: z.string() }),
      resumeSchema: z.object({ approved: z.boolean() }),
      deadline: { in: 60_000 },
    },
  },
  execute: (ctx) => {
    if (ctx.entry.type === "resume") return ctx.entry.resume;
    const prompt = { prompt: "ok?" };
    switch (ctx.input.choice) {
      case "default":
        return ctx.suspend("approval", prompt);
      case "override":
        return ctx.suspend("approval", prompt, {
          deadline: { in: 5_000, onDeadline: "fail", reason: "The approver did not answer in 5 seconds." },
        });
      case "none":
        return ctx.suspend("approval", prompt, { deadline: null });
      case "at":
        return ctx.suspend("approval", prompt, { deadline: { at: new Date(NOW + 3_600_000) } });
      default:
        // Untyped code (or a cast) can still hand over nonsense: it must not reach the row.
        return ctx.suspend("approval", prompt, { deadline: { in: 0 } as DeadlineInput });
    }
  },
});

/** A client-routed tool whose deadline depends on the call's input. */
const runCheck = defineTool({
  id: "test.deadline-run-check.v1",
  description: "Ask a worker to run a check",
  inputSchema: z.object({ urgency: z.enum(["high", "low", "broken", "throws"]) }),
  outputSchema: z.object({ passed: z.boolean() }),
  deadline: (input) => {
    if (input.urgency === "throws") throw new Error("no urgency table");
    if (input.urgency === "broken") return { in: -1 };
    return input.urgency === "high"
      ? { in: 30_000, onDeadline: "fail", reason: "The worker is down." }
      : null;
  },
});

async function suspendWith(choice: string) {
  const t = await createTestRuntime({
    agent: defineAgent({ tools: { approve } }),
    model: [
      { toolCalls: [{ toolName: "approve", toolCallId: "call-1", input: { choice } }] },
      { text: "Done." },
    ],
    clock,
  });
  const threadId = await t.createThread();
  const waiting = await t.send(threadId, "approve it");
  return { t, threadId, waiting };
}

describe("deadlines of suspensions", () => {
  it("a suspend point's default deadline is stored on the action, counted from the suspension", async () => {
    const { t, waiting } = await suspendWith("default");
    const deadline = { at: fromNow(60_000), resolution: "cancel", reason: DEFAULT_REASON };
    expect(waiting.actions).toHaveLength(1);
    expect(waiting.actions[0]).toMatchObject({ name: "approve.approval", state: "pending", deadline });

    const view = projectThreadState(waiting);
    expect(view.pending[0]?.deadline).toEqual(deadline);
    const part = view.messages
      .flatMap((message) => message.parts)
      .find((p: any) => p.toolCallId === "call-1");
    expect((part as any).pendingSuspension.deadline).toEqual(deadline);
    expect((part as any).suspensions[0].deadline).toEqual(deadline);
    await t.close();
  });

  it("ctx.suspend's deadline option overrides the point's", async () => {
    const { t, waiting } = await suspendWith("override");
    expect(waiting.actions[0]?.deadline).toEqual({
      at: fromNow(5_000),
      resolution: "fail",
      reason: "The approver did not answer in 5 seconds.",
    });
    await t.close();
  });

  it("a null deadline option waits without one, and the row is stored as before", async () => {
    const { t, waiting } = await suspendWith("none");
    expect(waiting.actions[0]?.deadline ?? null).toBeNull();
    expect(projectThreadState(waiting).pending[0]?.deadline).toBeNull();
    await t.close();
  });

  it("an `at` deadline is stored as its ISO instant", async () => {
    const { t, waiting } = await suspendWith("at");
    expect(waiting.actions[0]?.deadline).toEqual({
      at: fromNow(3_600_000),
      resolution: "cancel",
      reason: DEFAULT_REASON,
    });
    await t.close();
  });

  it("an invalid deadline fails the call model-visibly instead of opening an action", async () => {
    const { t, threadId, waiting } = await suspendWith("invalid");
    expect(waiting.actions).toEqual([]);
    expect(waiting.runs.at(-1)?.status).toBe("completed");
    const [part] = await t.toolParts(threadId);
    expect(part).toMatchObject({ state: "output-error" });
    expect(part!.errorText).toBe(
      'Tool approve suspended at "approval" with an invalid deadline: in must be a whole number of milliseconds from 1 to 31622400000 (366 days), got 0.',
    );
    expect(toolResultFor(scripted(t), 1, "call-1").output).toEqual({
      type: "error-text",
      value: part!.errorText,
    });
    await t.close();
  });

  it("the resumed tool sees the deadline in its suspension history", async () => {
    let history: unknown[] = [];
    const recording = defineTool({
      id: "test.deadline-history.v1",
      description: "Ask, then report the history",
      inputSchema: z.object({}),
      outputSchema: z.object({ approved: z.boolean() }),
      suspend: {
        approval: {
          suspendSchema: z.object({}),
          resumeSchema: z.object({ approved: z.boolean() }),
          deadline: { in: 1_000, reason: "Too late." },
        },
      },
      execute: (ctx) => {
        if (ctx.entry.type === "initial") return ctx.suspend("approval", {});
        history = ctx.suspendHistory;
        return ctx.entry.resume;
      },
    });
    const t = await createTestRuntime({
      agent: defineAgent({ tools: { recording } }),
      model: [{ toolCalls: [{ toolName: "recording", toolCallId: "call-1", input: {} }] }, { text: "Ok." }],
      clock,
    });
    const threadId = await t.createThread();
    await t.send(threadId, "go");
    await t.submit(threadId, "recording.approval", { approved: true });
    expect(history).toMatchObject([
      { status: "submitted", deadline: { at: fromNow(1_000), resolution: "cancel", reason: "Too late." } },
    ]);
    await t.close();
  });
});

describe("deadlines of client-routed calls", () => {
  async function callCheck(urgencies: string[]) {
    const t = await createTestRuntime({
      agent: defineAgent({ tools: { runCheck } }),
      model: [
        {
          toolCalls: urgencies.map((urgency, index) => ({
            toolName: "runCheck",
            toolCallId: `call-${urgency}-${index}`,
            input: { urgency },
          })),
        },
        { text: "Done." },
      ],
      clock,
    });
    const threadId = await t.createThread();
    const waiting = await t.send(threadId, "check");
    return { t, threadId, waiting };
  }

  it("the tool's deadline function chooses each call's deadline from its input", async () => {
    const { t, waiting } = await callCheck(["high", "low"]);
    const high = waiting.actions.find((action) => action.toolCallId === "call-high-0");
    const low = waiting.actions.find((action) => action.toolCallId === "call-low-1");
    expect(high).toMatchObject({
      kind: "output",
      state: "pending",
      deadline: { at: fromNow(30_000), resolution: "fail", reason: "The worker is down." },
    });
    expect(low).toMatchObject({ kind: "output", state: "pending" });
    expect(low?.deadline ?? null).toBeNull();
    const pending = projectThreadState(waiting).pending;
    expect(pending.map((action) => action.deadline?.at ?? null)).toEqual([fromNow(30_000), null]);
    await t.close();
  });

  it("a deadline function that throws or returns an invalid deadline fails that call model-visibly", async () => {
    const errors: unknown[] = [];
    const t = await createTestRuntime({
      agent: defineAgent({ tools: { runCheck } }),
      model: [
        {
          toolCalls: [
            { toolName: "runCheck", toolCallId: "call-broken", input: { urgency: "broken" } },
            { toolName: "runCheck", toolCallId: "call-throws", input: { urgency: "throws" } },
            { toolName: "runCheck", toolCallId: "call-low", input: { urgency: "low" } },
          ],
        },
        { text: "Done." },
      ],
      clock,
      onRuntimeError: (report) => errors.push(report.error),
    });
    const threadId = await t.createThread();
    const waiting = await t.send(threadId, "check");
    expect(waiting.actions.map((action) => action.toolCallId)).toEqual(["call-low"]);
    const parts = await t.toolParts(threadId);
    const byCall = (id: string) => parts.find((part) => part.toolCallId === id)!;
    expect(byCall("call-broken")).toMatchObject({
      state: "output-error",
      errorText: expect.stringMatching(/^Tool runCheck chose an invalid deadline: in must be a whole number/),
    });
    expect(byCall("call-throws")).toMatchObject({
      state: "output-error",
      errorText: "Tool runCheck could not choose a deadline for this call: no urgency table",
    });
    expect(errors).toHaveLength(1);

    const done = await t.submit(threadId, "runCheck.output", { passed: true });
    expect(done.runs.at(-1)?.status).toBe("completed");
    expect(toolResultFor(scripted(t), 1, "call-broken").output).toMatchObject({ type: "error-text" });
    await t.close();
  });
});

describe("deadlines in definitions", () => {
  function definitionError(define: () => unknown): string {
    try {
      define();
    } catch (error) {
      expect(PaiError.isInstance(error) && error.code).toBe("INVALID_DEFINITION");
      return (error as Error).message;
    }
    throw new Error("expected defineTool to throw");
  }
  const loose = defineTool as (config: Record<string, unknown>) => unknown;
  const base = { description: "x", inputSchema: z.object({}) };

  it("refuses an invalid deadline on a suspend point", () => {
    const message = definitionError(() =>
      loose({
        ...base,
        id: "test.bad-point-deadline",
        suspend: { ask: { suspendSchema: z.object({}), resumeSchema: z.object({}), deadline: { in: "5m" } } },
        execute: () => 1,
      }),
    );
    expect(message).toMatch(/suspend point "ask" has an invalid deadline: in must be a whole number/);
  });

  it("refuses a tool deadline on a tool with execute, and an invalid one on a client-routed tool", () => {
    expect(
      definitionError(() =>
        loose({ ...base, id: "test.deadline-with-execute", deadline: { in: 1_000 }, execute: () => 1 }),
      ),
    ).toContain("deadline is for tools whose output a client supplies");
    expect(
      definitionError(() => loose({ ...base, id: "test.bad-tool-deadline", deadline: { at: "soon" } })),
    ).toContain("invalid deadline: at must be a valid Date");
  });
});
