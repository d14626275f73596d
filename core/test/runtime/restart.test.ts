import { defineAgent, defineTool } from "@pai/core";
import { createTestRuntime } from "@pai/core/testing";
import { memoryStorage } from "@pai/storage-memory";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { scripted, toolResultFor } from "./_helpers.js";

describe("process restart", () => {
  it("a thread suspended in one runtime is resumed by a second runtime on the same storage", async () => {
    const entries: Array<{ runtime: string; entry: any }> = [];
    let runtimeName = "first";
    const requestApproval = defineTool({
      id: "test.request-approval.v1",
      description: "Request approval before sending a report",
      inputSchema: z.object({ summary: z.string() }),
      outputSchema: z.object({ approved: z.boolean(), comment: z.string().optional() }),
      suspend: {
        approval: {
          suspendSchema: z.object({ prompt: z.string() }),
          resumeSchema: z.object({ approved: z.boolean(), comment: z.string().optional() }),
        },
      },
      execute: (ctx: any) => {
        entries.push({ runtime: runtimeName, entry: ctx.entry });
        if (ctx.entry.type === "initial") return ctx.suspend("approval", { prompt: ctx.input.summary });
        return ctx.entry.resume;
      },
    });
    const agent = defineAgent({ tools: { requestApproval } });
    const storage = memoryStorage();

    const first = await createTestRuntime({
      agent,
      storage,
      model: [
        {
          toolCalls: [
            { toolName: "requestApproval", toolCallId: "call-approval", input: { summary: "Q3 report" } },
          ],
        },
      ],
    });
    const threadId = await first.createThread();
    const waiting = await first.send(threadId, "send the Q3 report");
    expect(waiting.runs.at(-1)?.status).toBe("waiting");
    const actionId = (await first.action(threadId, "requestApproval.approval")).actionId;
    await first.close();

    runtimeName = "second";
    const second = await createTestRuntime({ agent, storage, model: [{ text: "Sent." }] });
    const done = await second.submit(threadId, actionId, { approved: true, comment: "Send it." });

    expect(entries.map((item) => `${item.runtime}:${item.entry.type}`)).toEqual([
      "first:initial",
      "second:resume",
    ]);
    expect(entries[1]!.entry).toMatchObject({
      type: "resume",
      name: "approval",
      resume: { approved: true, comment: "Send it." },
      action: { actionId, toolCallId: "call-approval", name: "requestApproval.approval" },
    });
    const [part] = await second.toolParts(threadId);
    expect(part).toMatchObject({
      state: "output-available",
      output: { approved: true, comment: "Send it." },
    });
    expect(toolResultFor(scripted(second), 0, "call-approval").output).toEqual({
      type: "json",
      value: { approved: true, comment: "Send it." },
    });
    expect(done.runs.map((run) => run.status)).toEqual(["completed"]);
    expect(await second.lastText(threadId)).toBe("Sent.");
    await second.close();
  });

  it("a client-routed call waiting in one runtime is answered through a second runtime", async () => {
    const getSelectedText = defineTool({
      id: "test.get-selected-text.v1",
      description: "Read the user's current selection",
      inputSchema: z.object({}),
      outputSchema: z.object({ text: z.string() }),
    });
    const agent = defineAgent({ tools: { getSelectedText } });
    const storage = memoryStorage();
    const first = await createTestRuntime({
      agent,
      storage,
      model: [{ toolCalls: [{ toolName: "getSelectedText", toolCallId: "call-sel", input: {} }] }],
    });
    const threadId = await first.createThread();
    await first.send(threadId, "what did I select?");
    await first.close();

    const second = await createTestRuntime({ agent, storage, model: [{ text: "You selected: hello" }] });
    const done = await second.submit(threadId, "getSelectedText.output", { text: "hello" });

    expect(toolResultFor(scripted(second), 0, "call-sel").output).toEqual({
      type: "json",
      value: { text: "hello" },
    });
    expect(done.runs.at(-1)?.status).toBe("completed");
    expect(await second.lastText(threadId)).toBe("You selected: hello");
  });

  it("a second test runtime on the same storage makes ids that do not collide with the first's", async () => {
    const agent = defineAgent({ tools: {} });
    const storage = memoryStorage();
    const first = await createTestRuntime({ agent, storage, model: [{ text: "one" }] });
    const firstThread = await first.createThread();
    await first.send(firstThread, "hello");
    await first.close();

    const second = await createTestRuntime({ agent, storage, model: [{ text: "two" }] });
    const secondThread = await second.createThread();
    await second.send(secondThread, "hello again");

    expect(secondThread).not.toBe(firstThread);
    expect(await second.lastText(secondThread)).toBe("two");
    expect(await second.lastText(firstThread)).toBe("one");
  });
});
