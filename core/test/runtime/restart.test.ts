import { defineAgent, defineTool, INTERRUPTED_TEXT } from "@pai/core";
import { memoryStorage } from "@pai/storage-memory";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { createTestRuntime } from "../support/test-runtime.js";
import { deferred, scripted, toolResultFor } from "./_helpers.js";

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

  it("a run whose process died mid-tool is adopted by another runtime: the call is interrupted, not re-run", async () => {
    const started = deferred();
    let executions = 0;
    const exportAll = defineTool({
      id: "test.export-all.v1",
      description: "Export everything",
      inputSchema: z.object({}),
      execute: () => {
        executions++;
        started.resolve();
        return new Promise<never>(() => undefined);
      },
    });
    const agent = defineAgent({ tools: { exportAll } });
    const storage = memoryStorage();
    // The first process's view of storage; "killing" it makes every later call fail, so it
    // can neither renew its lease nor commit anything, like a process that is gone.
    let dead = false;
    const firstStorage = new Proxy(storage, {
      get(target, property, receiver) {
        const value = Reflect.get(target, property, receiver);
        if (typeof value !== "function") return value;
        return (...args: unknown[]) =>
          dead ? Promise.reject(new Error("process died")) : value.apply(target, args);
      },
    });
    const first = await createTestRuntime({
      agent,
      storage: firstStorage,
      model: [{ toolCalls: [{ toolName: "exportAll", toolCallId: "call-export", input: {} }] }],
      leaseMs: 1_000,
      onRuntimeError: () => undefined,
    });
    const threadId = await first.createThread();
    await first.pai.service.threads.send({ identity: first.identity, threadId, message: { text: "export" } });
    await started.promise;
    dead = true;

    const later = Date.now() + 60_000;
    const second = await createTestRuntime({
      agent,
      storage,
      model: [{ text: "The export was interrupted; shall I retry?" }],
      clock: () => new Date(later),
    });
    expect(await second.pai.recover()).toBe(1);
    await second.waitForIdle(threadId);

    const snapshot = await second.snapshot(threadId);
    expect(executions).toBe(1);
    const [part] = await second.toolParts(threadId);
    expect(part).toMatchObject({ state: "output-error", errorText: INTERRUPTED_TEXT });
    expect(toolResultFor(scripted(second), 0, "call-export").output).toEqual({
      type: "error-text",
      value: INTERRUPTED_TEXT,
    });
    expect(snapshot.runs.at(-1)?.status).toBe("completed");
    expect(await second.lastText(threadId)).toBe("The export was interrupted; shall I retry?");
    // `first` is deliberately never closed: like a dead process, its tool never settles.
    await second.close();
  });
});
