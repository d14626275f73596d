import {
  type AfterToolResultArgs,
  defineAgent,
  defineTool,
  REDACTED_ERROR_MESSAGE,
  type RuntimeErrorReport,
} from "@pai/core";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { createTestRuntime } from "../support/test-runtime.js";
import { deferred, eventually, projectedPart, rejection, scripted, toolResultFor } from "./_helpers.js";

type Observed = { input: unknown; output: unknown; name: string; toolCallId: string };

const openDocument = defineTool({
  id: "test.observers.open-document.v1",
  description: "Open a document",
  inputSchema: z.object({ docId: z.string() }),
  outputSchema: z.object({ revision: z.string().transform(Number) }),
  // Returns the schema's input shape on purpose: the stored and observed output is the parsed one.
  execute: ({ input }) => ({ revision: input.docId === "d1" ? "7" : "1" }) as never,
});

const callOpen = (toolCallId = "call-open", docId = "d1") => ({
  toolCalls: [{ toolName: "openDoc", toolCallId, input: { docId } }],
});

const approve = defineTool({
  id: "test.observers.approve.v1",
  description: "Ask for approval",
  inputSchema: z.object({ summary: z.string() }),
  outputSchema: z.object({ approved: z.boolean() }),
  suspend: {
    approval: {
      suspendSchema: z.object({ prompt: z.string() }),
      resumeSchema: z.object({ approved: z.boolean() }),
    },
  },
  execute: (ctx) =>
    ctx.entry.type === "initial" ? ctx.suspend("approval", { prompt: ctx.input.summary }) : ctx.entry.resume,
});

const pick = defineTool({
  id: "test.observers.pick.v1",
  description: "Let the user pick",
  inputSchema: z.object({ options: z.array(z.string()) }),
  outputSchema: z.object({ choice: z.string() }),
});

describe("onOutput", () => {
  it("runs once per call on the settled, validated output with the resolver args and the call", async () => {
    const observed: Array<Record<string, unknown>> = [];
    const t = await createTestRuntime({
      agent: defineAgent({
        runtimeContext: () => ({ recents: "store" }),
        tools: {
          openDoc: {
            tool: openDocument,
            onOutput: (args) => {
              observed.push({ ...args });
            },
          },
        },
      }),
      model: [callOpen(), { text: "Opened." }],
    });
    const threadId = await t.createThread();
    await t.send(threadId, "open d1", { clientData: { tab: 2 } });

    expect(observed).toHaveLength(1);
    expect(observed[0]).toMatchObject({
      runtimeContext: { recents: "store" },
      identity: t.identity,
      clientData: { tab: 2 },
      threadId,
      input: { docId: "d1" },
      output: { revision: 7 },
      tool: { name: "openDoc" },
      call: { toolCallId: "call-open" },
    });
    expect(observed[0]!.signal).toBeInstanceOf(AbortSignal);
  });

  it("runs on the resumed result of a suspended call, not at the suspension", async () => {
    const observed: unknown[] = [];
    const t = await createTestRuntime({
      agent: defineAgent({
        tools: { approve: { tool: approve, onOutput: ({ output }) => void observed.push(output) } },
      }),
      model: [
        { toolCalls: [{ toolName: "approve", toolCallId: "call-a", input: { summary: "Ship" } }] },
        { text: "Shipped." },
      ],
    });
    const threadId = await t.createThread();
    await t.send(threadId, "ship");
    expect(observed).toEqual([]);

    await t.submit(threadId, "approve.approval", { approved: true });
    expect(observed).toEqual([{ approved: true }]);
  });

  it("runs on a client-submitted output once validated, and an invalid submission never reaches it", async () => {
    const observed: Observed[] = [];
    const t = await createTestRuntime({
      agent: defineAgent({
        tools: {
          pick: {
            tool: pick,
            onOutput: ({ input, output, tool, call }) =>
              void observed.push({ input, output, name: tool.name, toolCallId: call.toolCallId }),
          },
        },
      }),
      model: [
        { toolCalls: [{ toolName: "pick", toolCallId: "call-pick", input: { options: ["a", "b"] } }] },
        { text: "Picked." },
      ],
    });
    const threadId = await t.createThread();
    await t.send(threadId, "pick one");

    await rejection(t.submit(threadId, "pick.output", { choice: 1 }));
    expect(observed).toEqual([]);
    await t.submit(threadId, "pick.output", { choice: "b" });
    expect(observed).toEqual([
      { input: { options: ["a", "b"] }, output: { choice: "b" }, name: "pick", toolCallId: "call-pick" },
    ]);
  });

  it("never runs for a failed call: ctx.fail, a throw, invalid output, a disabled tool, a cancelled or failed action", async () => {
    const observed: string[] = [];
    const onOutput = ({ call }: { call: { toolCallId: string } }) => void observed.push(call.toolCallId);
    // The id is a runtime value here; its literal type only matters for generated clients.
    const failing = (id: string, execute: (ctx: any) => any) =>
      defineTool({
        id: id as "test.observers.failing",
        description: id,
        inputSchema: z.object({}),
        outputSchema: z.number(),
        execute,
      });
    const t = await createTestRuntime({
      onRuntimeError: () => undefined,
      agent: defineAgent({
        tools: {
          refuses: { tool: failing("test.observers.refuses.v1", (ctx) => ctx.fail("No.")), onOutput },
          throws: {
            tool: failing("test.observers.throws.v1", () => {
              throw new Error("boom");
            }),
            onOutput,
          },
          invalid: { tool: failing("test.observers.invalid.v1", () => "not a number"), onOutput },
          disabled: { tool: failing("test.observers.disabled.v1", () => 1), enabled: false, onOutput },
          approve: { tool: approve, onOutput },
          pick: { tool: pick, onOutput },
        },
      }),
      model: [
        {
          toolCalls: [
            { toolName: "refuses", toolCallId: "c1", input: {} },
            { toolName: "throws", toolCallId: "c2", input: {} },
            { toolName: "invalid", toolCallId: "c3", input: {} },
            { toolName: "disabled", toolCallId: "c4", input: {} },
            { toolName: "approve", toolCallId: "c5", input: { summary: "x" } },
            { toolName: "pick", toolCallId: "c6", input: { options: [] } },
          ],
        },
        { text: "Done." },
      ],
    });
    const threadId = await t.createThread();
    await t.send(threadId, "go");
    await t.cancel(threadId, "approve.approval", "never mind");
    const done = await t.fail(threadId, "pick.output", "The user closed the dialog.");

    for (const id of ["c1", "c2", "c3", "c4", "c5", "c6"]) {
      expect(projectedPart(done, id).state).toBe("output-error");
    }
    expect(observed).toEqual([]);
  });

  it("runs after afterToolResult and sees what the model will see", async () => {
    const order: string[] = [];
    const observed: unknown[] = [];
    const t = await createTestRuntime({
      agent: defineAgent({
        tools: {
          openDoc: {
            tool: openDocument,
            onOutput: ({ output }) => {
              order.push("onOutput");
              observed.push(output);
            },
          },
        },
        lifecycle: {
          afterToolResult: ({ result }) => {
            order.push("afterToolResult");
            return result.type === "output"
              ? { type: "output", output: { ...(result.output as object), annotated: true } }
              : undefined;
          },
        },
      }),
      model: [callOpen(), { text: "Opened." }],
    });
    const threadId = await t.createThread();
    await t.send(threadId, "open");

    expect(order).toEqual(["afterToolResult", "onOutput"]);
    expect(observed).toEqual([{ revision: 7, annotated: true }]);
    expect(toolResultFor(scripted(t), 1, "call-open").output).toEqual({
      type: "json",
      value: { revision: 7, annotated: true },
    });
  });

  it("is awaited before the next model step sees the output", async () => {
    const gate = deferred();
    const entered = deferred();
    const t = await createTestRuntime({
      agent: defineAgent({
        tools: {
          openDoc: {
            tool: openDocument,
            onOutput: async () => {
              entered.resolve();
              await gate.promise;
            },
          },
        },
      }),
      model: [callOpen(), { text: "Opened." }],
    });
    const threadId = await t.createThread();
    await t.pai.service.threads.send({ identity: t.identity, threadId, message: { text: "open" } });
    await entered.promise;
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(scripted(t).calls).toHaveLength(1);
    // The result is persisted only after the observer returns.
    expect(projectedPart(await t.snapshot(threadId), "call-open").state).toBe("input-available");

    gate.resolve();
    await t.waitForIdle(threadId);
    expect(scripted(t).calls).toHaveLength(2);
  });

  it("a throw on a client-submitted output fails the run, is redacted from the client and reported", async () => {
    const reports: RuntimeErrorReport[] = [];
    const t = await createTestRuntime({
      onRuntimeError: (report) => void reports.push(report),
      agent: defineAgent({
        tools: {
          pick: {
            tool: pick,
            onOutput: () => {
              throw new Error("recents store is down (secret-host:5432)");
            },
          },
        },
      }),
      model: [{ toolCalls: [{ toolName: "pick", toolCallId: "call-pick", input: { options: ["a"] } }] }],
    });
    const threadId = await t.createThread();
    await t.send(threadId, "pick");

    const error = await rejection(t.submit(threadId, "pick.output", { choice: "a" }));
    expect(error.code).toBe("INTERNAL");
    expect(error.message).toMatch(/^An internal error occurred \(reference [\w-]+\)/);
    expect(error.message).not.toContain("secret-host");
    const correlationId = error.details?.correlationId;
    await t.waitForIdle(threadId);
    const run = await t.lastRun(threadId);
    expect(run?.status).toBe("failed");
    expect(run?.error).toBe(REDACTED_ERROR_MESSAGE);
    expect(JSON.stringify(await t.snapshot(threadId))).not.toContain("secret-host");
    // The observer's own error, then the failed request under the id its client was given.
    expect(reports.map((report) => String((report.error as Error)?.message))).toEqual([
      expect.stringContaining("secret-host"),
      REDACTED_ERROR_MESSAGE,
    ]);
    expect(reports[1]).toMatchObject({ phase: "request", correlationId, operation: "actions.submit" });
    expect(scripted(t).calls).toHaveLength(1);
  });
});

describe("lifecycle.afterToolResult", () => {
  it("sees every result with its name, input and output or error", async () => {
    const seen: Array<Pick<AfterToolResultArgs, "name" | "toolCallId" | "input" | "result">> = [];
    const t = await createTestRuntime({
      agent: defineAgent({
        tools: {
          openDoc: openDocument,
          refuses: defineTool({
            id: "test.observers.refuse.v1",
            description: "Refuse",
            inputSchema: z.object({ why: z.string() }),
            execute: (ctx) => ctx.fail(`Refused: ${ctx.input.why}`),
          }),
          pick,
        },
        lifecycle: {
          afterToolResult: ({ name, toolCallId, input, result }) => {
            seen.push({ name, toolCallId, input, result });
          },
        },
      }),
      model: [
        {
          toolCalls: [
            { toolName: "openDoc", toolCallId: "c1", input: { docId: "d1" } },
            { toolName: "refuses", toolCallId: "c2", input: { why: "policy" } },
            { toolName: "pick", toolCallId: "c3", input: { options: ["x"] } },
          ],
        },
        { text: "Done." },
      ],
    });
    const threadId = await t.createThread();
    await t.send(threadId, "go");
    await t.submit(threadId, "pick.output", { choice: "x" });

    const byId = Object.fromEntries(seen.map((entry) => [entry.toolCallId, entry]));
    expect(byId.c1).toEqual({
      name: "openDoc",
      toolCallId: "c1",
      input: { docId: "d1" },
      result: { type: "output", output: { revision: 7 } },
    });
    expect(byId.c2).toEqual({
      name: "refuses",
      toolCallId: "c2",
      input: { why: "policy" },
      result: { type: "error", errorText: "Refused: policy" },
    });
    expect(byId.c3).toEqual({
      name: "pick",
      toolCallId: "c3",
      input: { options: ["x"] },
      result: { type: "output", output: { choice: "x" } },
    });
    expect(seen).toHaveLength(3);
  });

  it("receives the resolver args its type declares: runtimeContext, identity, clientData, threadId and signal", async () => {
    const seen: Array<Record<string, unknown>> = [];
    const t = await createTestRuntime({
      agent: defineAgent({
        runtimeContext: () => ({ tenant: "acme" }),
        tools: { openDoc: openDocument },
        lifecycle: {
          afterToolResult: (args) => {
            seen.push({ ...args });
          },
        },
      }),
      model: [callOpen(), { text: "Opened." }],
    });
    const threadId = await t.createThread();
    await t.send(threadId, "open", { clientData: { tab: 3 } });

    expect(seen).toHaveLength(1);
    expect(seen[0]).toMatchObject({
      runtimeContext: { tenant: "acme" },
      identity: t.identity,
      threadId,
      clientData: { tab: 3 },
    });
    expect(seen[0]!.signal).toBeInstanceOf(AbortSignal);
  });

  it("sees the error of a client-routed call the client failed", async () => {
    const seen: Array<{ toolCallId: string; result: unknown }> = [];
    const t = await createTestRuntime({
      agent: defineAgent({
        tools: { pick },
        lifecycle: {
          afterToolResult: ({ toolCallId, result }) => {
            seen.push({ toolCallId, result });
          },
        },
      }),
      model: [
        { toolCalls: [{ toolName: "pick", toolCallId: "call-pick", input: { options: ["a"] } }] },
        { text: "Okay." },
      ],
    });
    const threadId = await t.createThread();
    await t.send(threadId, "pick");
    await t.fail(threadId, "pick.output", "The user closed the dialog.");

    expect(seen).toEqual([
      { toolCallId: "call-pick", result: { type: "error", errorText: "The user closed the dialog." } },
    ]);
  });

  it("can turn a failure into an output, which then reaches onOutput and the model", async () => {
    const observed: unknown[] = [];
    const t = await createTestRuntime({
      agent: defineAgent({
        tools: {
          refuses: {
            tool: defineTool({
              id: "test.observers.flaky.v1",
              description: "Flaky",
              inputSchema: z.object({}),
              execute: (ctx) => ctx.fail("Upstream timed out."),
            }),
            onOutput: ({ output }) => void observed.push(output),
          },
        },
        lifecycle: {
          afterToolResult: ({ result }) =>
            result.type === "error" ? { type: "output", output: { fallback: true } } : undefined,
        },
      }),
      model: [{ toolCalls: [{ toolName: "refuses", toolCallId: "c1", input: {} }] }, { text: "Ok." }],
    });
    const threadId = await t.createThread();
    const snapshot = await t.send(threadId, "go");

    expect(projectedPart(snapshot, "c1")).toMatchObject({
      state: "output-available",
      output: { fallback: true },
    });
    expect(observed).toEqual([{ fallback: true }]);
    expect(toolResultFor(scripted(t), 1, "c1").output).toEqual({ type: "json", value: { fallback: true } });
  });

  it("can turn an output into an error, which then never reaches onOutput", async () => {
    const observed: unknown[] = [];
    const t = await createTestRuntime({
      agent: defineAgent({
        tools: { openDoc: { tool: openDocument, onOutput: ({ output }) => void observed.push(output) } },
        lifecycle: {
          afterToolResult: ({ result }) =>
            result.type === "output" ? { type: "error", errorText: "Blocked by policy." } : undefined,
        },
      }),
      model: [callOpen(), { text: "Blocked." }],
    });
    const threadId = await t.createThread();
    const snapshot = await t.send(threadId, "open");

    expect(projectedPart(snapshot, "call-open")).toMatchObject({
      state: "output-error",
      errorText: "Blocked by policy.",
    });
    expect(observed).toEqual([]);
    expect(toolResultFor(scripted(t), 1, "call-open").output).toEqual({
      type: "error-text",
      value: "Blocked by policy.",
    });
  });

  it("a throw fails the run with a redacted error and reports it", async () => {
    const reports: RuntimeErrorReport[] = [];
    const t = await createTestRuntime({
      onRuntimeError: (report) => void reports.push(report),
      agent: defineAgent({
        tools: { openDoc: openDocument },
        lifecycle: {
          afterToolResult: () => {
            throw new Error("audit sink unreachable (token=abc123)");
          },
        },
      }),
      model: [callOpen()],
    });
    const threadId = await t.createThread();
    await t.send(threadId, "open");
    await eventually(async () => (await t.lastRun(threadId))?.status === "failed");

    const snapshot = await t.snapshot(threadId);
    expect(snapshot.runs.at(-1)?.error).toBe(REDACTED_ERROR_MESSAGE);
    expect(JSON.stringify(snapshot)).not.toContain("abc123");
    expect(reports.some((report) => JSON.stringify(String(report.error)).includes("abc123"))).toBe(true);
  });
});
