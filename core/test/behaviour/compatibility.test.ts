import { defineAgent, defineTool, getToolName, isPaiToolPart } from "@pai/core";
import { projectThreadState } from "@pai/core/protocol";
import { memoryStorage } from "@pai/storage-memory";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { createTestRuntime } from "../support/test-runtime.js";
import { projectedPart, rejection, scripted, toolNamesInCall, toolResultFor } from "./_helpers.js";

const legacyLookup = defineTool({
  id: "test.compat.legacy-lookup.v1",
  description: "Old lookup",
  inputSchema: z.object({ q: z.string() }),
  outputSchema: z.object({ hits: z.number() }),
  execute: () => ({ hits: 3 }),
});

const legacyPick = defineTool({
  id: "test.compat.legacy-pick.v1",
  description: "Old client-routed pick",
  inputSchema: z.object({}),
  outputSchema: z.object({ choice: z.string() }),
});

const legacyApprove = defineTool({
  id: "test.compat.legacy-approve.v1",
  description: "Old approval",
  inputSchema: z.object({}),
  outputSchema: z.object({ approved: z.boolean() }),
  suspend: { approval: { suspendSchema: z.object({}), resumeSchema: z.object({ approved: z.boolean() }) } },
  execute: (ctx) => (ctx.entry.type === "initial" ? ctx.suspend("approval", {}) : ctx.entry.resume),
});

const current = defineTool({
  id: "test.compat.current.v2",
  description: "Current tool",
  inputSchema: z.object({}),
  execute: () => null,
});

describe("persisted-call compatibility", () => {
  it("terminal calls of a removed registration still load, render and are sent to the model", async () => {
    const storage = memoryStorage();
    const before = await createTestRuntime({
      storage,
      agent: defineAgent({ tools: { legacyLookup, current } }),
      model: [
        { toolCalls: [{ toolName: "legacyLookup", toolCallId: "call-old", input: { q: "x" } }] },
        { text: "Found 3." },
      ],
    });
    const threadId = await before.createThread();
    await before.send(threadId, "look it up");
    await before.close();

    const after = await createTestRuntime({
      storage,
      agent: defineAgent({ tools: { current } }),
      model: [{ text: "Still 3." }],
    });
    const loaded = await after.snapshot(threadId);
    const part = projectedPart(loaded, "call-old");
    expect(part).toMatchObject({ type: "tool-legacyLookup", state: "output-available", output: { hits: 3 } });
    expect(isPaiToolPart(part as { type: string })).toBe(true);
    expect(getToolName(part as { type: string })).toBe("legacyLookup");

    const done = await after.send(threadId, "and now?");
    expect(done.runs.at(-1)?.status).toBe("completed");
    expect(toolNamesInCall(scripted(after), 0)).toEqual(["current"]);
    expect(toolResultFor(scripted(after), 0, "call-old")).toMatchObject({
      toolName: "legacyLookup",
      output: { type: "json", value: { hits: 3 } },
    });
    expect(await after.lastText(threadId)).toBe("Still 3.");
  });

  it("an unfinished call of a removed tool fails submit with MIGRATION_REQUIRED naming the tool; cancel still closes it", async () => {
    const storage = memoryStorage();
    const before = await createTestRuntime({
      storage,
      agent: defineAgent({ tools: { legacyPick, legacyApprove } }),
      model: [
        {
          toolCalls: [
            { toolName: "legacyPick", toolCallId: "call-pick", input: {} },
            { toolName: "legacyApprove", toolCallId: "call-approve", input: {} },
          ],
        },
      ],
    });
    const threadId = await before.createThread();
    await before.send(threadId, "pick and approve");
    await before.close();

    const after = await createTestRuntime({
      storage,
      agent: defineAgent({ tools: { current } }),
      model: [{ text: "Closed the old work." }],
    });
    const pickError = await rejection(after.submit(threadId, "legacyPick.output", { choice: "a" }));
    expect(pickError.code).toBe("MIGRATION_REQUIRED");
    expect(pickError.message).toContain("legacyPick");
    const approveError = await rejection(
      after.submit(threadId, "legacyApprove.approval", { approved: true }),
    );
    expect(approveError.code).toBe("MIGRATION_REQUIRED");
    expect(approveError.message).toContain("legacyApprove");
    expect((await after.pending(threadId)).map((action) => action.name).sort()).toEqual([
      "legacyApprove.approval",
      "legacyPick.output",
    ]);

    await after.cancel(threadId, "legacyPick.output", "tool removed");
    const done = await after.fail(threadId, "legacyApprove.approval", "tool removed");
    expect(done.actions.map((action) => action.state).sort()).toEqual(["cancelled", "failed"]);
    expect(done.runs.at(-1)?.status).toBe("completed");
    expect(await after.lastText(threadId)).toBe("Closed the old work.");
  });

  it("getToolName works on static tool parts and dynamic-tool parts alike", async () => {
    const t = await createTestRuntime({
      agent: defineAgent({ tools: { current } }),
      model: [
        {
          toolCalls: [
            { toolName: "current", toolCallId: "c-static", input: {} },
            { toolName: "client.ask", toolCallId: "c-dynamic", input: {} },
          ],
        },
      ],
    });
    const threadId = await t.createThread();
    const snapshot = await t.send(threadId, "go", {
      clientTools: [{ name: "client.ask", description: "Ask", inputSchema: { type: "object" } }],
    });
    const parts = projectThreadState(snapshot)
      .messages.flatMap((message) => message.parts)
      .filter((part) => isPaiToolPart(part as { type: string }));
    expect(
      parts.map((part) => [part.type, getToolName(part as { type: string; toolName?: string })]),
    ).toEqual([
      ["tool-current", "current"],
      ["dynamic-tool", "client.ask"],
    ]);
  });
});
