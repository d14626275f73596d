import { describe, expect, it } from "vitest";
import { z } from "zod";
import { createTestRuntime } from "../support/test-runtime.js";

const agent = { kind: "agent" as const, name: "main", tools: {} } as any;

describe("frontend-defined client tools (smoke)", () => {
  it("becomes a dynamic-tool part with a tool.output action validated against the declared output schema", async () => {
    const t = await createTestRuntime({
      agent,
      model: [{ toolCalls: [{ toolName: "client.getSelectedText", input: {} }] }, { text: "got it" }],
    });
    const threadId = await t.createThread();
    const clientTools = [
      {
        name: "client.getSelectedText",
        description: "Read the selection",
        inputSchema: { type: "object", properties: {} },
        outputSchema: { type: "object", properties: { text: { type: "string" } }, required: ["text"] },
      },
    ];
    await t.send(threadId, "what did I select?", { clientTools });
    const action = await t.action(threadId, "client.getSelectedText.output");
    expect(action.actionId).toBe((await t.toolParts(threadId))[0]!.toolCallId);
    await expect(
      t.pai.service.actions.submit({
        identity: t.identity,
        threadId,
        actionId: action.actionId,
        payload: { text: 1 },
      }),
    ).rejects.toMatchObject({ code: "INVALID_INPUT" });
    expect((await t.pending(threadId)).length).toBe(1);
    await t.submit(threadId, action.actionId, { text: "hello" });
    expect((await t.toolParts(threadId))[0]).toMatchObject({
      type: "dynamic-tool",
      toolName: "client.getSelectedText",
      state: "output-available",
      output: { text: "hello" },
    });
    expect(await t.lastText(threadId)).toBe("got it");
    void z;
  });
});
