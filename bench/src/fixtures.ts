import { scriptedModel } from "@pai/core/testing";
import { tool } from "ai";
import { z } from "zod";

/**
 * The agent every PAI scenario runs: one executing tool and one approval tool that
 * suspends. Built as plain runtime-shaped definitions so the bench has no dependency on
 * the type layer.
 */
export const addTool = {
  kind: "tool" as const,
  id: "bench.add.v1",
  config: {
    description: "Add two numbers.",
    inputSchema: z.object({ a: z.number(), b: z.number() }),
    outputSchema: z.number(),
  },
  capabilities: {},
  execute: ({ input }: { input: { a: number; b: number } }) => input.a + input.b,
};

export const approveTool = {
  kind: "tool" as const,
  id: "bench.approve.v1",
  config: {
    description: "Ask for approval.",
    inputSchema: z.object({ summary: z.string() }),
    outputSchema: z.object({ approved: z.boolean() }),
    suspend: {
      approval: {
        suspendSchema: z.object({ prompt: z.string() }),
        resumeSchema: z.object({ approved: z.boolean() }),
      },
    },
  },
  capabilities: {},
  execute: (ctx: any) =>
    ctx.entry.type === "initial" ? ctx.suspend("approval", { prompt: ctx.input.summary }) : ctx.entry.resume,
};

export const benchAgent = {
  kind: "agent" as const,
  name: "bench",
  tools: { add: { tool: addTool }, approve: { tool: approveTool } },
};

/**
 * A deterministic model: the first call of a turn calls a tool, the call after a tool
 * result answers with text. Stateless, so any number of runs can share it.
 */
export function turnModel(toolName: "add" | "approve") {
  return scriptedModel(
    (call) => {
      const last = call.prompt.at(-1);
      if (last?.role === "tool") return { text: "done" };
      return {
        toolCalls: [{ toolName, input: toolName === "add" ? { a: 1, b: 2 } : { summary: "ship it" } }],
      };
    },
    // The benchmark makes tens of thousands of calls; recording them would be measured as runtime memory.
    { recordCalls: false },
  );
}

/** The same `add` tool for the bare AI SDK baselines, executed by the SDK itself. */
export const bareAddTools = {
  add: tool({
    description: "Add two numbers.",
    inputSchema: z.object({ a: z.number(), b: z.number() }),
    execute: async ({ a, b }) => a + b,
  }),
};
