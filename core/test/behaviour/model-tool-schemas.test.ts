import { defineAgent, defineTool } from "@pai/core";
import type { ToolSet } from "ai";
import { describe, expect, it, vi } from "vitest";
import { z } from "zod";
import { createTestRuntime } from "../support/test-runtime.js";
import { offeredTool, scripted } from "./_helpers.js";

// The provider-level tool format has no output schema at all, so the model's recorded call
// cannot show whether PAI forwarded one. This records the AI SDK ToolSet the runtime hands to
// the SDK's tool preparation: the model-facing SDK tools themselves.
const recorded = vi.hoisted(() => ({ toolSets: [] as ToolSet[] }));
vi.mock("ai/internal", async (importOriginal) => {
  const actual = await importOriginal<Record<string, unknown>>();
  const prepareTools = actual.prepareTools as (options: { tools: ToolSet }) => Promise<unknown>;
  return {
    ...actual,
    prepareTools: (options: { tools: ToolSet }) => {
      recorded.toolSets.push(options.tools);
      return prepareTools(options);
    },
  };
});

describe("model-facing SDK tools", () => {
  it("carry the tool's description and inputSchema but not its outputSchema", async () => {
    const outputSchema = z.object({ distinctiveOutputField: z.string() });
    const lookup = defineTool({
      id: "test.model-tool-schemas.lookup.v1",
      description: "Look up an order",
      inputSchema: z.object({ orderNumber: z.string() }),
      outputSchema,
      execute: () => ({ distinctiveOutputField: "x" }),
    });
    const t = await createTestRuntime({
      agent: defineAgent({ tools: { lookup } }),
      model: [
        { toolCalls: [{ toolName: "lookup", toolCallId: "call-1", input: { orderNumber: "7" } }] },
        { text: "Done." },
      ],
    });
    const threadId = await t.createThread();
    await t.send(threadId, "look up 7");

    expect(scripted(t).calls).toHaveLength(2);
    expect(offeredTool(scripted(t), 0, "lookup").description).toBe("Look up an order");
    // One SDK tool set per model call.
    expect(recorded.toolSets).toHaveLength(2);
    for (const toolSet of recorded.toolSets) {
      expect(Object.keys(toolSet)).toEqual(["lookup"]);
      const sdkTool = toolSet.lookup as Record<string, unknown>;
      expect(sdkTool.description).toBe("Look up an order");
      expect(sdkTool.inputSchema).toBeDefined();
      expect(sdkTool).not.toHaveProperty("outputSchema");
      expect(Object.values(sdkTool)).not.toContain(outputSchema);
    }
  });
});
