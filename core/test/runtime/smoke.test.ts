import { describe, expect, it } from "vitest";
import { z } from "zod";
import { createTestRuntime } from "../support/test-runtime.js";

const agentOf = (tools: Record<string, unknown>) => ({ kind: "agent" as const, name: "main", tools });
const toolOf = (config: Record<string, unknown>) => ({
  kind: "tool" as const,
  id: String(config.id),
  config,
  capabilities: {},
  execute: config.execute,
});

describe("smoke", () => {
  it("runs a tool then text", async () => {
    const add = toolOf({
      id: "add",
      description: "add",
      inputSchema: z.object({ a: z.number(), b: z.number() }),
      outputSchema: z.number(),
      execute: ({ input }: any) => input.a + input.b,
    });
    const t = await createTestRuntime({
      agent: agentOf({ add: { tool: add } }) as any,
      model: [{ toolCalls: [{ toolName: "add", input: { a: 1, b: 2 } }] }, { text: "3" }],
    });
    const threadId = await t.createThread();
    const snapshot = await t.send(threadId, "1+2?");
    expect(await t.lastText(threadId)).toBe("3");
    const parts = await t.toolParts(threadId);
    expect(parts[0]).toMatchObject({ type: "tool-add", state: "output-available", output: 3 });
    expect(snapshot.runs.at(-1)?.status).toBe("completed");
  });

  it("suspends and resumes", async () => {
    const approve = toolOf({
      id: "approve",
      description: "approve",
      inputSchema: z.object({ summary: z.string() }),
      outputSchema: z.object({ approved: z.boolean() }),
      suspend: {
        approval: {
          suspendSchema: z.object({ prompt: z.string() }),
          resumeSchema: z.object({ approved: z.boolean() }),
        },
      },
      execute: (ctx: any) =>
        ctx.entry.type === "initial"
          ? ctx.suspend("approval", { prompt: ctx.input.summary })
          : ctx.entry.resume,
    });
    const t = await createTestRuntime({
      agent: agentOf({ approve: { tool: approve } }) as any,
      model: [{ toolCalls: [{ toolName: "approve", input: { summary: "send" } }] }, { text: "done" }],
    });
    const threadId = await t.createThread();
    const waiting = await t.send(threadId, "go");
    expect(waiting.runs.at(-1)?.status).toBe("waiting");
    const action = await t.action(threadId, "approve.approval");
    expect(action.input).toEqual({ prompt: "send" });
    await t.submit(threadId, action.actionId, { approved: true });
    expect(await t.lastText(threadId)).toBe("done");
    const parts = await t.toolParts(threadId);
    expect(parts[0]).toMatchObject({ state: "output-available", output: { approved: true } });
  });
});
