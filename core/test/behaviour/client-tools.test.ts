import { type ClientToolSnapshot, defineAgent, defineTool } from "@pai/core";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { createTestRuntime } from "../support/test-runtime.js";
import {
  offeredTool,
  projectedPart,
  rejection,
  scripted,
  toolNamesInCall,
  toolResultFor,
} from "./_helpers.js";

const lookup = defineTool({
  id: "test.client-tools.lookup.v1",
  description: "Look something up",
  inputSchema: z.object({}),
  execute: () => null,
});

const selection: ClientToolSnapshot = {
  name: "client.getSelectedText",
  description: "Read the text currently selected in this client",
  inputSchema: { type: "object", properties: {}, additionalProperties: false },
  outputSchema: {
    type: "object",
    properties: { text: { type: "string" } },
    required: ["text"],
    additionalProperties: false,
  },
};

async function runtime(
  script: Parameters<typeof createTestRuntime>[0]["model"],
  maxClientToolsBytes?: number,
) {
  const t = await createTestRuntime({
    agent: defineAgent({ tools: { lookup } }),
    model: script,
    ...(maxClientToolsBytes ? { maxClientToolsBytes } : {}),
  });
  const threadId = await t.createThread();
  return { t, threadId };
}

describe("frontend-defined client tools", () => {
  it("a snapshot naming a backend tool is rejected and starts no run", async () => {
    const { t, threadId } = await runtime([]);
    const error = await rejection(
      t.send(threadId, "hi", { clientTools: [{ ...selection, name: "lookup" }] }),
    );
    expect(error.code).toBe("INVALID_INPUT");
    expect(error.message).toContain("lookup");
    expect((await t.snapshot(threadId)).runs).toEqual([]);
    expect(scripted(t).calls).toHaveLength(0);
  });

  it("a reserved name such as pai.x is rejected", async () => {
    const { t, threadId } = await runtime([]);
    const error = await rejection(t.send(threadId, "hi", { clientTools: [{ ...selection, name: "pai.x" }] }));
    expect(error.code).toBe("INVALID_INPUT");
    expect(error.message).toMatch(/reserved/i);
  });

  it("a non-serializable schema is rejected", async () => {
    const { t, threadId } = await runtime([]);
    const inputSchema = {
      type: "object",
      default: () => ({}),
    } as unknown as ClientToolSnapshot["inputSchema"];
    const error = await rejection(t.send(threadId, "hi", { clientTools: [{ ...selection, inputSchema }] }));
    expect(error.code).toBe("INVALID_INPUT");
    expect(error.message).toMatch(/serializable/i);

    const notAnObject = {
      ...selection,
      outputSchema: "string" as unknown as ClientToolSnapshot["outputSchema"],
    };
    expect((await rejection(t.send(threadId, "hi", { clientTools: [notAnObject] }))).code).toBe(
      "INVALID_INPUT",
    );
  });

  it("an oversized snapshot is rejected with PAYLOAD_TOO_LARGE", async () => {
    const { t, threadId } = await runtime([], 512);
    const big = { ...selection, description: "x".repeat(1_000) };
    const error = await rejection(t.send(threadId, "hi", { clientTools: [big] }));
    expect(error.code).toBe("PAYLOAD_TOO_LARGE");
    expect(error.message).toContain("512");
  });

  it("the model sees the snapshot's tools for that run only", async () => {
    const { t, threadId } = await runtime([{ text: "One." }, { text: "Two." }]);
    await t.send(threadId, "first", { clientTools: [selection] });
    await t.send(threadId, "second");

    expect(toolNamesInCall(scripted(t), 0)).toEqual(["client.getSelectedText", "lookup"]);
    const offered = offeredTool(scripted(t), 0, "client.getSelectedText");
    expect(offered.description).toBe(selection.description);
    expect(offered.inputSchema).toMatchObject({ type: "object", properties: {} });
    expect(toolNamesInCall(scripted(t), 1)).toEqual(["lookup"]);
  });

  it("a call becomes a tool.output action whose submissions are validated against the declared output schema", async () => {
    const { t, threadId } = await runtime([
      { toolCalls: [{ toolName: "client.getSelectedText", toolCallId: "call-sel", input: {} }] },
      { text: "You selected hello." },
    ]);
    const waiting = await t.send(threadId, "what did I select?", { clientTools: [selection] });
    expect(waiting.runs.at(-1)?.status).toBe("waiting");
    const action = await t.action(threadId, "client.getSelectedText.output");
    expect(action).toMatchObject({ kind: "output", toolCallId: "call-sel", actionId: "call-sel" });
    expect(projectedPart(waiting, "call-sel")).toMatchObject({
      type: "dynamic-tool",
      toolName: "client.getSelectedText",
    });

    const invalid = await rejection(t.submit(threadId, "client.getSelectedText.output", { text: 42 }));
    expect(invalid.code).toBe("INVALID_INPUT");
    expect((await t.pending(threadId)).map((pending) => pending.actionId)).toEqual(["call-sel"]);
    expect(projectedPart(await t.snapshot(threadId), "call-sel").state).toBe("input-available");

    const done = await t.submit(threadId, "client.getSelectedText.output", { text: "hello" });
    expect(projectedPart(done, "call-sel")).toMatchObject({
      state: "output-available",
      output: { text: "hello" },
    });
    expect(toolResultFor(scripted(t), 1, "call-sel").output).toEqual({
      type: "json",
      value: { text: "hello" },
    });
    expect(done.runs.at(-1)?.status).toBe("completed");
  });

  it("a client tool grants no backend execution: its calls wait for a client even when nothing answers", async () => {
    let backendRuns = 0;
    const t = await createTestRuntime({
      agent: defineAgent({
        tools: {
          lookup: defineTool({
            id: "test.client-tools.counted.v1",
            description: "Backend lookup",
            inputSchema: z.object({}),
            execute: () => {
              backendRuns++;
              return null;
            },
          }),
        },
      }),
      model: [{ toolCalls: [{ toolName: "client.getSelectedText", toolCallId: "call-sel", input: {} }] }],
    });
    const threadId = await t.createThread();
    const waiting = await t.send(threadId, "hi", { clientTools: [selection] });
    expect(backendRuns).toBe(0);
    expect(waiting.runs.at(-1)?.status).toBe("waiting");
    expect(waiting.actions.map((action) => action.name)).toEqual(["client.getSelectedText.output"]);
  });

  it("a snapshot sent with a submission replaces the run's client tools for its next steps", async () => {
    const other: ClientToolSnapshot = {
      ...selection,
      name: "client.scrollTo",
      description: "Scroll the page",
    };
    const { t, threadId } = await runtime([
      { toolCalls: [{ toolName: "client.getSelectedText", toolCallId: "call-sel", input: {} }] },
      { text: "Done." },
    ]);
    await t.send(threadId, "hi", { clientTools: [selection] });
    await t.pai.service.actions.submit({
      identity: t.identity,
      threadId,
      actionId: "call-sel",
      payload: { text: "x" },
      clientTools: [selection, other],
    });
    await t.waitForIdle(threadId);
    expect(toolNamesInCall(scripted(t), 1)).toEqual(["client.getSelectedText", "client.scrollTo", "lookup"]);
  });
});
