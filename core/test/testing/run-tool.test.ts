import { defineTool } from "@pai/core";
import { runTool } from "@pai/core/testing";
import { memoryStorage } from "@pai/storage-memory";
import { describe, expect, it } from "vitest";
import { z } from "zod";

const approve = defineTool({
  id: "test.run-tool.approve.v1",
  description: "Ask for approval",
  inputSchema: z.object({ summary: z.string() }),
  outputSchema: z.object({ approved: z.boolean() }),
  contextSchema: z.object({ prefix: z.string() }),
  suspend: {
    approval: {
      suspendSchema: z.object({ prompt: z.string() }),
      resumeSchema: z.object({ approved: z.boolean() }),
    },
  },
  execute: (ctx) => {
    if (ctx.entry.type === "initial") {
      return ctx.suspend("approval", { prompt: `${ctx.context.prefix}${ctx.input.summary}` });
    }
    if (ctx.entry.type === "resume" && ctx.entry.name === "approval") return ctx.entry.resume;
    throw new Error("Unsupported tool entry");
  },
});

describe("runTool", () => {
  it("runs one tool with its context, reports the suspension and resumes it to the output", async () => {
    const first = await runTool(approve, {
      input: { summary: "ship" },
      context: { prefix: "OK? " },
      storage: memoryStorage(),
    });
    expect(first).toMatchObject({
      type: "waiting",
      action: { name: "tool.approval", input: { prompt: "OK? ship" } },
    });
    if (first.type !== "waiting") return;
    expect(await first.submit({ approved: true })).toEqual({ type: "output", output: { approved: true } });
  });

  it("reports invalid input and ctx.fail as errors", async () => {
    expect(
      await runTool(approve, { input: { summary: 1 }, context: { prefix: "" }, storage: memoryStorage() }),
    ).toMatchObject({
      type: "error",
    });
    const failing = defineTool({
      id: "test.run-tool.fail.v1",
      description: "Fails",
      inputSchema: z.object({}),
      execute: ({ fail }) => fail("No such report. List reports first."),
    });
    expect(await runTool(failing, { input: {}, storage: memoryStorage() })).toEqual({
      type: "error",
      errorText: "No such report. List reports first.",
    });
  });
});
