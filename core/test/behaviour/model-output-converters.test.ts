import { setTimeout as delay } from "node:timers/promises";
import { defineAgent, defineTool } from "@pai/core";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { createTestRuntime, openTestStorage } from "../support/test-runtime.js";
import { offeredTool, projectedPart, scripted, toolNamesInCall, toolResultFor } from "./_helpers.js";

const reportOutput = { summary: "3 open incidents", rawRows: ["secret-row-1"] };

const readReport = defineTool({
  id: "test.converters.read-report.v1",
  description: "Read the incident report",
  inputSchema: z.object({}),
  outputSchema: z.object({ summary: z.string(), rawRows: z.array(z.string()) }),
  execute: () => reportOutput,
  toModelOutput: ({ output }) => ({ type: "text", value: `Summary: ${output.summary}` }),
});

const callReadReport = { toolCalls: [{ toolName: "readReport", toolCallId: "call-report", input: {} }] };

describe("model-facing tool output", () => {
  it("the tool's outputSchema is not forwarded to the model; its inputSchema is", async () => {
    const lookup = defineTool({
      id: "test.converters.schema-offer.v1",
      description: "Look up an order",
      inputSchema: z.object({ orderNumberInputField: z.string() }),
      outputSchema: z.object({ distinctiveOutputField: z.string(), anotherOutputOnlyField: z.number() }),
      execute: () => ({ distinctiveOutputField: "x", anotherOutputOnlyField: 1 }),
    });
    const t = await createTestRuntime({
      agent: defineAgent({ tools: { lookup } }),
      model: [{ text: "Hi." }],
    });
    const threadId = await t.createThread();
    await t.send(threadId, "hello");

    const offered = offeredTool(scripted(t), 0, "lookup");
    expect(offered).not.toHaveProperty("outputSchema");
    expect(offered.inputSchema).toMatchObject({
      type: "object",
      properties: { orderNumberInputField: { type: "string" } },
    });
    const serialized = JSON.stringify(scripted(t).calls[0]!.tools);
    expect(serialized).toContain("orderNumberInputField");
    expect(serialized).not.toContain("distinctiveOutputField");
    expect(serialized).not.toContain("anotherOutputOnlyField");
  });

  it("toModelOutput receives the call's toolCallId, input and output, and may be async", async () => {
    const received: unknown[] = [];
    const echo = defineTool({
      id: "test.converters.async-converter.v1",
      description: "Echo",
      inputSchema: z.object({ word: z.string() }),
      outputSchema: z.object({ echoed: z.string() }),
      execute: ({ input }) => ({ echoed: input.word.toUpperCase() }),
      toModelOutput: async ({ toolCallId, input, output }) => {
        received.push({ toolCallId, input, output });
        await delay(5);
        return { type: "text", value: `${toolCallId}: ${output.echoed}` };
      },
    });
    const t = await createTestRuntime({
      agent: defineAgent({ tools: { echo } }),
      model: [
        {
          toolCalls: [
            { toolName: "echo", toolCallId: "call-a", input: { word: "one" } },
            { toolName: "echo", toolCallId: "call-b", input: { word: "two" } },
          ],
        },
        { text: "Done." },
      ],
    });
    const threadId = await t.createThread();
    await t.send(threadId, "echo");

    expect(toolResultFor(scripted(t), 1, "call-a").output).toEqual({ type: "text", value: "call-a: ONE" });
    expect(toolResultFor(scripted(t), 1, "call-b").output).toEqual({ type: "text", value: "call-b: TWO" });
    expect(received).toEqual(
      expect.arrayContaining([
        { toolCallId: "call-a", input: { word: "one" }, output: { echoed: "ONE" } },
        { toolCallId: "call-b", input: { word: "two" }, output: { echoed: "TWO" } },
      ]),
    );
    // The stored result stays the original JSON.
    const parts = await t.toolParts(threadId);
    expect(parts.map((part) => part.output)).toEqual([{ echoed: "ONE" }, { echoed: "TWO" }]);
  });

  it.each([
    {
      label: "an outputSchema that transforms a JSON result into undefined",
      outputSchema: z.object({ ok: z.boolean() }).transform(() => undefined),
      result: { ok: true },
    },
    {
      label: "an optional outputSchema accepting an undefined result",
      outputSchema: z.object({ ok: z.boolean() }).optional(),
      result: undefined,
    },
  ])(
    "a converter tool whose output schema produces undefined ends in output-error ($label)",
    async ({ outputSchema, result }) => {
      let converted = 0;
      const voidish = defineTool({
        id: "test.converters.undefined-output.v1",
        description: "Produces undefined",
        inputSchema: z.object({}),
        outputSchema,
        execute: () => result as never,
        toModelOutput: () => {
          converted++;
          return { type: "text", value: "converted" };
        },
      });
      const t = await createTestRuntime({
        agent: defineAgent({ tools: { voidish } }),
        model: [{ toolCalls: [{ toolName: "voidish", toolCallId: "call-void", input: {} }] }, { text: "ok" }],
      });
      const threadId = await t.createThread();
      const snapshot = await t.send(threadId, "go");

      const part = projectedPart(snapshot, "call-void");
      expect(part.state).toBe("output-error");
      expect(part.errorText).toBe(
        "Tool voidish has toModelOutput and must return a JSON value; return null explicitly when there is nothing to return.",
      );
      expect(toolResultFor(scripted(t), 1, "call-void").output).toEqual({
        type: "error-text",
        value: part.errorText,
      });
      expect(converted).toBe(0);
      expect(snapshot.runs.at(-1)?.status).toBe("completed");
    },
  );

  it("the same undefined-producing output schema without a converter is an ordinary successful result", async () => {
    const voidish = defineTool({
      id: "test.converters.undefined-no-converter.v1",
      description: "Produces undefined",
      inputSchema: z.object({}),
      outputSchema: z.object({ ok: z.boolean() }).transform(() => undefined),
      // The schema's input shape on purpose: the schema turns it into undefined.
      execute: () => ({ ok: true }) as never,
    });
    const t = await createTestRuntime({
      agent: defineAgent({ tools: { voidish } }),
      model: [{ toolCalls: [{ toolName: "voidish", toolCallId: "call-void", input: {} }] }, { text: "ok" }],
    });
    const threadId = await t.createThread();
    const snapshot = await t.send(threadId, "go");
    // Stored as PAI stores any void result: null.
    expect(projectedPart(snapshot, "call-void")).toMatchObject({ state: "output-available", output: null });
  });

  it("a disabled registration keeps converting its stored results; a removed one falls back to raw JSON", async () => {
    const { storage, dispose } = await openTestStorage();
    try {
      const state = { enabled: true };
      const withTool = defineAgent({
        name: "converter-history",
        tools: { readReport: { tool: readReport, enabled: () => state.enabled } },
      });
      const first = await createTestRuntime({
        agent: withTool,
        storage,
        model: [callReadReport, { text: "3 incidents." }, { text: "Still 3." }],
      });
      const threadId = await first.createThread();
      await first.send(threadId, "how many incidents?");
      expect(toolResultFor(scripted(first), 1, "call-report").output).toEqual({
        type: "text",
        value: "Summary: 3 open incidents",
      });

      // Disabled: no longer offered, but its converter still projects the stored result.
      state.enabled = false;
      await first.send(threadId, "and now?");
      expect(toolNamesInCall(scripted(first), 2)).toEqual([]);
      expect(toolResultFor(scripted(first), 2, "call-report").output).toEqual({
        type: "text",
        value: "Summary: 3 open incidents",
      });
      expect(JSON.stringify(scripted(first).calls[2]!.prompt)).not.toContain("secret-row-1");
      await first.close();

      // Removed: the stored JSON is all that is left, so the model receives it raw.
      const withoutTool = defineAgent({ name: "converter-history", tools: {} });
      const second = await createTestRuntime({ agent: withoutTool, storage, model: [{ text: "Raw now." }] });
      const snapshot = await second.send(threadId, "once more?");
      expect(snapshot.runs.at(-1)?.status).toBe("completed");
      expect(toolResultFor(scripted(second), 0, "call-report").output).toEqual({
        type: "json",
        value: reportOutput,
      });
      await second.close();
    } finally {
      await dispose();
    }
  });
});
