import { type ClientToolSnapshot, defineAgent, defineTool, PaiError, type StorageV1 } from "@pai/core";
import { memoryStorage } from "@pai/storage-memory";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { createTestRuntime } from "../support/test-runtime.js";
import { deferred } from "./_helpers.js";

/**
 * Defects of the engine before it became deciders and one fenced writer, each reproduced here:
 * tool data written after the lease was lost, a client-tool call that became unanswerable,
 * child results that skipped `afterToolResult`, and hooks installed on the runtime itself.
 */

async function rejection(promise: Promise<unknown>): Promise<PaiError> {
  try {
    await promise;
  } catch (error) {
    if (PaiError.isInstance(error)) return error;
    throw error;
  }
  throw new Error("expected a rejection");
}

describe("the run's lease fences tool data", () => {
  it("a process that lost the run's lease cannot write durable tool data", async () => {
    const inner = memoryStorage();
    let stolen = false;
    // Another instance adopts the run: every renewal of this process's lease is refused from now on.
    const storage: StorageV1 = {
      ...inner,
      commit: (input) => inner.commit(input),
      loadThread: (input) => inner.loadThread(input),
      listThreads: (input) => inner.listThreads(input),
      readEvents: (input) => inner.readEvents(input),
      getAction: (input) => inner.getAction(input),
      listActions: (input) => inner.listActions(input),
      acquireRunLease: async (input) => (stolen ? false : inner.acquireRunLease(input)),
      releaseRunLease: (input) => inner.releaseRunLease(input),
      listRecoverableRuns: (input) => inner.listRecoverableRuns(input),
      listDueThreads: (input) => inner.listDueThreads(input),
    };
    const gate = deferred();
    const started = deferred();
    const writes: Array<"written" | string> = [];
    const slow = defineTool({
      id: "test.defects.slow-writer.v1",
      description: "Writes progress after a pause",
      inputSchema: z.object({}),
      dataSchemas: { progress: z.object({ pct: z.number() }) },
      execute: async (ctx) => {
        started.resolve();
        await gate.promise;
        try {
          await ctx.data.write("progress", { pct: 1 });
          writes.push("written");
        } catch (error) {
          writes.push((error as Error).name);
        }
        return null;
      },
    });
    const t = await createTestRuntime({
      storage,
      leaseMs: 90,
      onRuntimeError: () => undefined,
      agent: defineAgent({ tools: { slow } }),
      model: [{ toolCalls: [{ toolName: "slow", toolCallId: "call-slow", input: {} }] }, { text: "Done." }],
    });
    const threadId = await t.createThread();
    await t.pai.service.threads.send({ identity: t.identity, threadId, message: { text: "go" } });
    // Stolen once the tool runs (a loaded machine may take longer than the lease to get there).
    await started.promise;
    stolen = true;
    // The heartbeat (every lease/3) learns the lease is gone.
    await new Promise((resolve) => setTimeout(resolve, 150));
    gate.resolve();
    await t.waitForIdle(threadId);
    expect(writes).toEqual(["LeaseLostError"]);
    const stored = await inner.loadThread({ threadId });
    expect(stored?.toolData).toEqual([]);
  });
});

describe("a pending client-tool call keeps the registration it was made with", () => {
  const pickColor: ClientToolSnapshot = {
    name: "pickColor",
    description: "Ask the user for a color",
    inputSchema: { type: "object", properties: {} },
    outputSchema: {
      type: "object",
      properties: { color: { type: "string" } },
      required: ["color"],
      additionalProperties: false,
    },
  };
  const pickSize: ClientToolSnapshot = {
    name: "pickSize",
    description: "Ask the user for a size",
    inputSchema: { type: "object", properties: {} },
    outputSchema: {
      type: "object",
      properties: { size: { type: "number" } },
      required: ["size"],
      additionalProperties: false,
    },
  };

  it("stays answerable, and validated by its own outputSchema, after a later answer sends other client tools", async () => {
    const t = await createTestRuntime({
      agent: defineAgent({ tools: {} }),
      model: [
        {
          toolCalls: [
            { toolName: "pickColor", toolCallId: "call-color", input: {} },
            { toolName: "pickSize", toolCallId: "call-size", input: {} },
          ],
        },
        { text: "Thanks." },
      ],
    });
    const threadId = await t.createThread();
    const waiting = await t.send(threadId, "choose", { clientTools: [pickColor, pickSize] });
    expect(waiting.actions.map((action) => action.state)).toEqual(["pending", "pending"]);
    // This client only knows pickColor now.
    await t.pai.service.actions.submit({
      identity: t.identity,
      threadId,
      actionId: "call-color",
      payload: { color: "teal" },
      clientTools: [pickColor],
    });
    await t.waitForIdle(threadId);
    // An operator with no client tools answers the other call.
    const invalid = await rejection(
      t.pai.service.actions.submit({
        identity: t.identity,
        threadId,
        actionId: "call-size",
        payload: { size: "L" },
      }),
    );
    expect(invalid.code).toBe("INVALID_INPUT");
    await t.pai.service.actions.submit({
      identity: t.identity,
      threadId,
      actionId: "call-size",
      payload: { size: 3 },
    });
    await t.waitForIdle(threadId);
    const done = await t.snapshot(threadId);
    expect(done.runs.at(-1)?.status).toBe("completed");
    expect(done.actions.map((action) => action.state)).toEqual(["submitted", "submitted"]);
  });
});

describe("child calls take the same hook path as top-level calls", () => {
  const lookup = defineTool({
    id: "test.defects.lookup.v1",
    description: "Look a word up",
    inputSchema: z.object({ word: z.string() }),
    outputSchema: z.object({ length: z.number() }),
    execute: ({ input }) => ({ length: input.word.length }),
  });
  const measure = defineTool({
    id: "test.defects.measure.v1",
    description: "Measure words with a child tool",
    inputSchema: z.object({ words: z.array(z.string()) }),
    outputSchema: z.number(),
    tools: { lookup },
    execute: async ({ input, tools }) => {
      const results = await Promise.all(input.words.map((word) => tools.lookup.execute({ word })));
      return results.reduce((sum, result) => sum + result.length, 0);
    },
  });

  it("afterToolResult sees child results, told which parent call made them, and may replace them", async () => {
    const seen: Array<{
      toolName: string;
      parent?: { toolName: string; toolCallId: string };
      result: unknown;
    }> = [];
    const t = await createTestRuntime({
      agent: defineAgent({
        tools: { measure },
        lifecycle: {
          afterToolResult: ({ toolName, parent, result }) => {
            seen.push({ toolName, ...(parent ? { parent } : {}), result });
            if (parent && result.type === "output") return { type: "output", output: { length: 10 } };
            return undefined;
          },
        },
      }),
      model: [
        { toolCalls: [{ toolName: "measure", toolCallId: "call-measure", input: { words: ["ab", "cde"] } }] },
        { text: "Measured." },
      ],
    });
    const threadId = await t.createThread();
    const done = await t.send(threadId, "measure");
    const children = seen.filter((entry) => entry.parent);
    expect(children).toHaveLength(2);
    expect(children[0]).toMatchObject({
      toolName: "lookup",
      parent: { toolName: "measure", toolCallId: "call-measure" },
    });
    expect(seen.at(-1)).toMatchObject({ toolName: "measure", result: { type: "output", output: 20 } });
    const part = done.messages
      .at(-1)
      ?.message.parts.find(
        (candidate) => (candidate as { toolCallId?: string }).toolCallId === "call-measure",
      );
    expect(part).toMatchObject({ state: "output-available", output: 20 });
  });

  it("a child's throwing hook fails the run, reported and redacted", async () => {
    const reports: unknown[] = [];
    const t = await createTestRuntime({
      onRuntimeError: (report) => void reports.push(report),
      agent: defineAgent({
        tools: { measure },
        lifecycle: {
          afterToolResult: ({ parent }) => {
            if (parent) throw new Error("audit log unreachable (10.0.0.7)");
            return undefined;
          },
        },
      }),
      model: [
        { toolCalls: [{ toolName: "measure", toolCallId: "call-measure", input: { words: ["ab"] } }] },
        { text: "Measured." },
      ],
    });
    const threadId = await t.createThread();
    const done = await t.send(threadId, "measure");
    expect(done.runs.at(-1)?.status).toBe("failed");
    expect(done.runs.at(-1)?.error).not.toContain("10.0.0.7");
    expect(JSON.stringify(reports.map((report) => String((report as { error: unknown }).error)))).toContain(
      "audit log unreachable",
    );
  });
});

describe("hooks installed on the runtime", () => {
  const failing = defineTool({
    id: "test.defects.failing.v1",
    description: "Always throws",
    inputSchema: z.object({}),
    execute: () => {
      throw new Error("disk full");
    },
  });
  const echo = defineTool({
    id: "test.defects.echo.v1",
    description: "Echo",
    inputSchema: z.object({ text: z.string() }),
    outputSchema: z.object({ text: z.string() }),
    execute: ({ input }) => input,
  });

  it("afterToolResult runs for every agent before the agent's own; mapError answers when the agent's does not", async () => {
    const order: string[] = [];
    const t = await createTestRuntime({
      onRuntimeError: () => undefined,
      hooks: {
        afterToolResult: ({ toolName, result }) => {
          order.push(`runtime:${toolName}`);
          return result.type === "output" ? { type: "output", output: { text: "from runtime" } } : undefined;
        },
        mapError: ({ toolName, error }) => `${toolName} failed: ${(error as Error).message}`,
      },
      agent: defineAgent({
        tools: { echo, failing },
        lifecycle: {
          afterToolResult: ({ toolName, result }) => {
            order.push(`agent:${toolName}:${JSON.stringify(result)}`);
            return undefined;
          },
        },
      }),
      model: [
        {
          toolCalls: [
            { toolName: "echo", toolCallId: "call-echo", input: { text: "hi" } },
            { toolName: "failing", toolCallId: "call-failing", input: {} },
          ],
        },
        { text: "Done." },
      ],
    });
    const threadId = await t.createThread();
    const done = await t.send(threadId, "go");
    expect(order).toContain(
      `agent:echo:${JSON.stringify({ type: "output", output: { text: "from runtime" } })}`,
    );
    expect(order.indexOf("runtime:echo")).toBeLessThan(
      order.findIndex((entry) => entry.startsWith("agent:echo")),
    );
    const parts = done.messages.at(-1)?.message.parts as Array<Record<string, unknown>>;
    expect(parts.find((part) => part.toolCallId === "call-failing")).toMatchObject({
      state: "output-error",
      errorText: "failing failed: disk full",
    });
  });
});
