import { defineAgent, defineTool, type RuntimeErrorReport } from "@pai/core";
import { describe, expect, it, vi } from "vitest";
import { z } from "zod";
import { createTestRuntime } from "../support/test-runtime.js";
import { scripted, toolResultFor } from "./_helpers.js";

describe("run loop", () => {
  it("a step without tool calls ends the run and its streamed text is committed once as one part", async () => {
    const t = await createTestRuntime({
      agent: defineAgent({ tools: {} }),
      model: [{ text: ["Good ", "morning", "!"] }],
    });
    const threadId = await t.createThread();
    const before = (await t.snapshot(threadId)).thread.version;
    const snapshot = await t.send(threadId, "hi");

    expect(scripted(t).calls).toHaveLength(1);
    expect(snapshot.runs.at(-1)).toMatchObject({ status: "completed", step: 1 });
    const assistant = snapshot.messages.find((message) => message.role === "assistant")!;
    expect(assistant.message.parts.filter((part) => part.type === "text")).toEqual([
      { type: "text", text: "Good morning!", state: "done" },
    ]);
    const batches = await t.storage.readEvents({ threadId, afterVersion: before });
    const assistantWrites = batches.filter((batch) =>
      batch.events.some(
        (event) => event.type === "message-upserted" && event.message.messageId === assistant.messageId,
      ),
    );
    expect(assistantWrites).toHaveLength(1);
  });

  it("tool calls of one step execute concurrently", async () => {
    let started = 0;
    let release!: () => void;
    const bothStarted = new Promise<void>((resolve) => {
      release = resolve;
    });
    const probe = defineTool({
      id: "test.probe.v1",
      description: "Probe",
      inputSchema: z.object({ name: z.string() }),
      outputSchema: z.object({ concurrent: z.boolean() }),
      execute: async () => {
        if (++started === 2) release();
        const timedOut = new Promise<boolean>((resolve) => setTimeout(() => resolve(false), 2000));
        return { concurrent: await Promise.race([bothStarted.then(() => true), timedOut]) };
      },
    });
    const t = await createTestRuntime({
      agent: defineAgent({ tools: { probe } }),
      model: [
        {
          toolCalls: [
            { toolName: "probe", toolCallId: "call-a", input: { name: "a" } },
            { toolName: "probe", toolCallId: "call-b", input: { name: "b" } },
          ],
        },
        { text: "both done" },
      ],
    });
    const threadId = await t.createThread();
    await t.send(threadId, "probe twice");

    const parts = await t.toolParts(threadId);
    expect(parts.map((part) => [part.toolCallId, part.output])).toEqual([
      ["call-a", { concurrent: true }],
      ["call-b", { concurrent: true }],
    ]);
  });

  it("a model error fails the run with a redacted message and reports the detail", async () => {
    const reports: RuntimeErrorReport[] = [];
    const t = await createTestRuntime({
      agent: defineAgent({ tools: {} }),
      model: [{ error: "provider rejected key sk-live-123" }],
      onRuntimeError: (report) => reports.push(report),
    });
    const threadId = await t.createThread();
    const snapshot = await t.send(threadId, "hi");

    expect(snapshot.runs.at(-1)?.status).toBe("failed");
    expect(snapshot.thread.status).toBe("idle");
    expect(JSON.stringify(snapshot)).not.toContain("sk-live-123");
    expect(reports.some((report) => String((report.error as Error)?.message).includes("sk-live-123"))).toBe(
      true,
    );
  });

  it("a model error goes to onRuntimeError and is not printed to the console", async () => {
    const printed = vi.spyOn(console, "error").mockImplementation(() => undefined);
    try {
      const reports: RuntimeErrorReport[] = [];
      const t = await createTestRuntime({
        agent: defineAgent({ tools: {} }),
        model: [{ error: "provider rejected key sk-live-456" }],
        onRuntimeError: (report) => reports.push(report),
      });
      const threadId = await t.createThread();
      await t.send(threadId, "hi");

      expect(reports).not.toHaveLength(0);
      expect(printed).not.toHaveBeenCalled();
    } finally {
      printed.mockRestore();
    }
  });

  it("a call to an unknown tool becomes an output-error and the run continues", async () => {
    const t = await createTestRuntime({
      agent: defineAgent({ tools: {} }),
      model: [
        { toolCalls: [{ toolName: "deleteEverything", toolCallId: "call-x", input: {} }] },
        { text: "I can't do that." },
      ],
    });
    const threadId = await t.createThread();
    const snapshot = await t.send(threadId, "delete everything");

    const [part] = await t.toolParts(threadId);
    expect(part).toMatchObject({ toolCallId: "call-x", state: "output-error" });
    expect(toolResultFor(scripted(t), 1, "call-x").output).toMatchObject({ type: "error-text" });
    expect(snapshot.runs.at(-1)?.status).toBe("completed");
  });

  it("a disabled tool is left out of the model request", async () => {
    const visible = defineTool({
      id: "test.visible.v1",
      description: "Visible",
      inputSchema: z.object({}),
      execute: () => null,
    });
    const hidden = defineTool({
      id: "test.hidden.v1",
      description: "Hidden",
      inputSchema: z.object({}),
      execute: () => null,
    });
    const t = await createTestRuntime({
      agent: defineAgent({
        tools: {
          visible,
          hidden: { tool: hidden, enabled: () => false },
        },
      }),
      model: [{ text: "ok" }],
    });
    const threadId = await t.createThread();
    await t.send(threadId, "what can you do?");

    const names = (scripted(t).calls[0]!.tools ?? []).map((entry) => entry.name);
    expect(names).toEqual(["visible"]);
  });

  it("instructions reach the model as the system prompt", async () => {
    const t = await createTestRuntime({
      agent: defineAgent({
        tools: {},
        runtimeContext: () => ({ team: "Platform" }),
        instructions: ({ runtimeContext }: any) => `You help the ${runtimeContext.team} team.`,
      }),
      model: [{ text: "ok" }],
    });
    const threadId = await t.createThread();
    await t.send(threadId, "hi");

    const system = scripted(t).calls[0]!.prompt.find((message) => message.role === "system");
    expect(system?.content).toBe("You help the Platform team.");
  });
});
