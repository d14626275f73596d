import { defineAgent, defineTool, type ToolFailureDetails, toolFailureDetails } from "@pai/core";
import { runTool } from "@pai/core/testing";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { createTestRuntime, openTestStorage } from "../support/test-runtime.js";
import { projectedPart, scripted, toolResultFor } from "./_helpers.js";

const refusing = defineTool({
  id: "test.failure-details.refusing.v1",
  description: "Refuses with the sentence it is given",
  inputSchema: z.object({ sentence: z.string() }),
  execute: (ctx) => ctx.fail(ctx.input.sentence),
});

describe("toolFailureDetails", () => {
  it("is exported from @pai/core and normalizes a failure into { code: 'tool_failed', message }", () => {
    const details: ToolFailureDetails = toolFailureDetails(
      "No job brief 42. List them with searchJobBriefs first.",
    );
    expect(details).toEqual({
      code: "tool_failed",
      message: "No job brief 42. List them with searchJobBriefs first.",
    });
    expect(toolFailureDetails("")).toEqual({ code: "tool_failed", message: "The tool failed." });
    expect(toolFailureDetails(" \n ")).toEqual({ code: "tool_failed", message: "The tool failed." });
    // Verbatim otherwise: nothing is trimmed or rewritten.
    expect(toolFailureDetails("  Closed.\n  Try south.\n").message).toBe("  Closed.\n  Try south.\n");
  });

  it("ctx.fail('') ends the call with the text 'The tool failed.', as the model and the client see it", async () => {
    const t = await createTestRuntime({
      agent: defineAgent({ tools: { refusing } }),
      model: [
        {
          toolCalls: [
            { toolName: "refusing", toolCallId: "call-empty", input: { sentence: "" } },
            {
              toolName: "refusing",
              toolCallId: "call-said",
              input: { sentence: "Region closed; try south." },
            },
          ],
        },
        { text: "Sorry." },
      ],
    });
    const threadId = await t.createThread();
    const snapshot = await t.send(threadId, "go");

    expect(projectedPart(snapshot, "call-empty")).toMatchObject({
      state: "output-error",
      errorText: toolFailureDetails("").message,
    });
    expect(projectedPart(snapshot, "call-empty").errorText).toBe("The tool failed.");
    expect(toolResultFor(scripted(t), 1, "call-empty").output).toEqual({
      type: "error-text",
      value: "The tool failed.",
    });
    // A non-empty sentence reaches the model verbatim.
    expect(toolResultFor(scripted(t), 1, "call-said").output).toEqual({
      type: "error-text",
      value: toolFailureDetails("Region closed; try south.").message,
    });
    expect(projectedPart(snapshot, "call-said").errorText).toBe("Region closed; try south.");
  });

  it("runTool agrees with the runtime on an empty ctx.fail", async () => {
    const { storage, dispose } = await openTestStorage();
    try {
      const result = await runTool(refusing, { input: { sentence: "" }, storage });
      expect(result).toEqual({ type: "error", errorText: toolFailureDetails("").message });
      expect(result).toEqual({ type: "error", errorText: "The tool failed." });
    } finally {
      await dispose();
    }
  });

  it("a child's empty ctx.fail rejects its caller with the same default text", async () => {
    const child = defineTool({
      id: "test.failure-details.child.v1",
      description: "Fails silently",
      inputSchema: z.object({}),
      execute: (ctx) => ctx.fail(""),
    });
    const parent = defineTool({
      id: "test.failure-details.parent.v1",
      description: "Parent",
      inputSchema: z.object({}),
      tools: { child },
      execute: async ({ tools }) => {
        try {
          await tools.child.execute({});
          return "resolved";
        } catch (error) {
          return (error as Error).message;
        }
      },
    });
    const t = await createTestRuntime({
      agent: defineAgent({ tools: { parent } }),
      model: [{ toolCalls: [{ toolName: "parent", toolCallId: "call-parent", input: {} }] }, { text: "Ok." }],
    });
    const threadId = await t.createThread();
    const snapshot = await t.send(threadId, "go");
    expect(projectedPart(snapshot, "call-parent")).toMatchObject({
      state: "output-available",
      output: "The tool failed.",
    });
  });
});
