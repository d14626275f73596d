import { defineAgent, defineTool, type RuntimeErrorReport } from "@pai/core";
import { memoryStorage } from "@pai/storage-memory";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { createTestRuntime } from "../support/test-runtime.js";
import { scripted, toolResultFor } from "./_helpers.js";

const reportOutput = { summary: "3 open incidents", rawRows: ["secret-row-1", "secret-row-2"] };

const readReport = (overrides: Record<string, unknown> = {}) =>
  defineTool({
    id: "test.read-report.v1",
    description: "Read the incident report",
    inputSchema: z.object({}),
    outputSchema: z.object({ summary: z.string(), rawRows: z.array(z.string()) }),
    execute: () => reportOutput,
    toModelOutput: ({ output }: any) => ({ type: "text", value: `Summary: ${output.summary}` }),
    ...overrides,
  });

const callReadReport = { toolCalls: [{ toolName: "readReport", toolCallId: "call-report", input: {} }] };

describe("toModelOutput", () => {
  it("the model's next prompt carries the projection while the stored output stays unchanged", async () => {
    const t = await createTestRuntime({
      agent: defineAgent({ tools: { readReport: readReport() } }),
      model: [callReadReport, { text: "There are 3 open incidents." }],
    });
    const threadId = await t.createThread();
    await t.send(threadId, "how many incidents?");

    expect(toolResultFor(scripted(t), 1, "call-report").output).toEqual({
      type: "text",
      value: "Summary: 3 open incidents",
    });
    expect(JSON.stringify(scripted(t).calls[1]!.prompt)).not.toContain("secret-row-1");
    const [part] = await t.toolParts(threadId);
    expect(part).toMatchObject({ state: "output-available", output: reportOutput });
  });

  it("the projection is applied again when a second runtime on the same storage rebuilds history", async () => {
    const storage = memoryStorage();
    const agent = defineAgent({ tools: { readReport: readReport() } });
    const first = await createTestRuntime({
      agent,
      storage,
      model: [callReadReport, { text: "There are 3 open incidents." }],
    });
    const threadId = await first.createThread();
    await first.send(threadId, "how many incidents?");
    await first.close();

    const second = await createTestRuntime({ agent, storage, model: [{ text: "Still 3." }] });
    const snapshot = await second.send(threadId, "and now?");

    expect(snapshot.runs.map((run) => run.status)).toEqual(["completed", "completed"]);
    expect(snapshot.messages.map((message) => message.role)).toEqual([
      "user",
      "assistant",
      "user",
      "assistant",
    ]);
    expect(toolResultFor(scripted(second), 0, "call-report").output).toEqual({
      type: "text",
      value: "Summary: 3 open incidents",
    });
    expect(JSON.stringify(scripted(second).calls[0]!.prompt)).not.toContain("secret-row-1");
    expect(await second.lastText(threadId)).toBe("Still 3.");
  });

  it("a converter tool that returns undefined is recorded as an output-error", async () => {
    const t = await createTestRuntime({
      agent: defineAgent({
        tools: {
          readReport: readReport({
            outputSchema: undefined,
            execute: () => undefined,
            toModelOutput: () => ({ type: "text", value: "nothing" }),
          }),
        },
      }),
      model: [callReadReport, { text: "ok" }],
    });
    const threadId = await t.createThread();
    await t.send(threadId, "read it");

    const [part] = await t.toolParts(threadId);
    expect(part).toMatchObject({ state: "output-error" });
    expect(part!.errorText).toMatch(/JSON value/);
  });

  it("a converter that throws fails model preparation and the run", async () => {
    const reports: RuntimeErrorReport[] = [];
    const t = await createTestRuntime({
      agent: defineAgent({
        tools: {
          readReport: readReport({
            toModelOutput: () => {
              throw new Error("converter exploded");
            },
          }),
        },
      }),
      model: [callReadReport, { text: "never reached" }],
      onRuntimeError: (report) => reports.push(report),
    });
    const threadId = await t.createThread();
    const snapshot = await t.send(threadId, "read it");

    expect(snapshot.runs.at(-1)?.status).toBe("failed");
    expect(scripted(t).calls).toHaveLength(1);
    expect(scripted(t).remaining).toBe(1);
    const [part] = await t.toolParts(threadId);
    expect(part).toMatchObject({ state: "output-available", output: reportOutput });
    expect(
      reports.some((report) => String((report.error as Error)?.message).includes("converter exploded")),
    ).toBe(true);
  });

  it("error results bypass the converter", async () => {
    let converted = 0;
    const t = await createTestRuntime({
      agent: defineAgent({
        tools: {
          readReport: readReport({
            execute: (ctx: any) => ctx.fail("The report is still being generated; retry in a minute."),
            toModelOutput: () => {
              converted++;
              return { type: "text", value: "converted" };
            },
          }),
        },
      }),
      model: [callReadReport, { text: "I'll retry later." }],
    });
    const threadId = await t.createThread();
    const snapshot = await t.send(threadId, "read it");

    expect(converted).toBe(0);
    expect(toolResultFor(scripted(t), 1, "call-report").output).toEqual({
      type: "error-text",
      value: "The report is still being generated; retry in a minute.",
    });
    expect(snapshot.runs.at(-1)?.status).toBe("completed");
  });

  it("cancellation results bypass the converter", async () => {
    let converted = 0;
    const t = await createTestRuntime({
      agent: defineAgent({
        tools: {
          readReport: readReport({
            suspend: {
              pickRange: {
                suspendSchema: z.object({ prompt: z.string() }),
                resumeSchema: z.object({ days: z.number() }),
              },
            },
            execute: (ctx: any) =>
              ctx.entry.type === "initial"
                ? ctx.suspend("pickRange", { prompt: "Which range?" })
                : reportOutput,
            toModelOutput: () => {
              converted++;
              return { type: "text", value: "converted" };
            },
          }),
        },
      }),
      model: [callReadReport, { text: "Okay, skipped." }],
    });
    const threadId = await t.createThread();
    await t.send(threadId, "read it");
    const snapshot = await t.cancel(threadId, "readReport.pickRange", "no range needed");

    expect(converted).toBe(0);
    const result = toolResultFor(scripted(t), 1, "call-report").output;
    expect(result.type).toBe("error-text");
    expect(result.value).toContain("no range needed");
    expect(snapshot.runs.at(-1)?.status).toBe("completed");
  });

  it("a content projection with media reaches the model as content blocks", async () => {
    const pixel =
      "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==";
    const showChart = defineTool({
      id: "test.show-chart.v1",
      description: "Inspect the report's chart.",
      inputSchema: z.object({}),
      outputSchema: z.object({ mediaType: z.literal("image/png"), data: z.string() }),
      execute: () => ({ mediaType: "image/png" as const, data: pixel }),
      toModelOutput: ({ output }) => ({
        type: "content",
        value: [{ type: "file", mediaType: output.mediaType, data: { type: "data", data: output.data } }],
      }),
    });
    const t = await createTestRuntime({
      agent: defineAgent({ tools: { showChart } }),
      model: [
        { toolCalls: [{ toolName: "showChart", toolCallId: "call-chart", input: {} }] },
        { text: "A dot." },
      ],
    });
    const threadId = await t.createThread();
    await t.send(threadId, "what is in the chart?");

    const output = toolResultFor(scripted(t), 1, "call-chart").output;
    expect(output.type).toBe("content");
    expect(JSON.stringify(output.value)).toContain(pixel);
    const [part] = await t.toolParts(threadId);
    expect(part).toMatchObject({
      state: "output-available",
      output: { mediaType: "image/png", data: pixel },
    });
  });
});
