import { defineAgent, defineTool, REDACTED_ERROR_MESSAGE, type RuntimeErrorReport } from "@pai/core";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { createTestRuntime } from "../support/test-runtime.js";
import { scripted, toolResultFor } from "./_helpers.js";

const createTask = (execute: (ctx: any) => any) =>
  defineTool({
    id: "test.create-task.v1",
    description: "Create a workspace task",
    inputSchema: z.object({ title: z.string(), description: z.string().optional() }),
    outputSchema: z.object({ taskId: z.string() }),
    execute,
  });

const callCreateTask = (input: unknown) => [
  { toolCalls: [{ toolName: "createTask", toolCallId: "call-task", input }] },
  { text: "Done." },
];

describe("backend tools", () => {
  it("invalid model input becomes an output-error and the run continues to the next step", async () => {
    let executed = 0;
    const tool = createTask(() => {
      executed++;
      return { taskId: "t1" };
    });
    const t = await createTestRuntime({
      agent: defineAgent({ tools: { createTask: tool } }),
      model: callCreateTask({ title: 42 }),
    });
    const threadId = await t.createThread();
    const snapshot = await t.send(threadId, "make a task");

    expect(executed).toBe(0);
    const [part] = await t.toolParts(threadId);
    expect(part).toMatchObject({ type: "tool-createTask", state: "output-error", toolCallId: "call-task" });
    expect(part!.errorText).toMatch(/title/);
    expect(scripted(t).calls).toHaveLength(2);
    expect(toolResultFor(scripted(t), 1, "call-task").output).toMatchObject({ type: "error-text" });
    expect(snapshot.runs.at(-1)?.status).toBe("completed");
    expect(await t.lastText(threadId)).toBe("Done.");
  });

  it("output that fails outputSchema becomes an output-error at the durable boundary", async () => {
    const t = await createTestRuntime({
      agent: defineAgent({ tools: { createTask: createTask(() => ({ taskId: 17 })) } }),
      model: callCreateTask({ title: "Write spec" }),
    });
    const threadId = await t.createThread();
    const snapshot = await t.send(threadId, "make a task");

    const [part] = await t.toolParts(threadId);
    expect(part).toMatchObject({ state: "output-error" });
    expect(part!.errorText).toMatch(/outputSchema/);
    expect(part).not.toHaveProperty("output");
    expect(snapshot.actions).toEqual([]);
    expect(snapshot.runs.at(-1)?.status).toBe("completed");
  });

  it("ctx.fail(sentence) reaches the model as an output-error with the sentence verbatim", async () => {
    const sentence = "No job brief jb-9. List them with searchJobBriefs first.";
    const t = await createTestRuntime({
      agent: defineAgent({ tools: { createTask: createTask((ctx) => ctx.fail(sentence)) } }),
      model: callCreateTask({ title: "Write spec" }),
    });
    const threadId = await t.createThread();
    await t.send(threadId, "make a task");

    const [part] = await t.toolParts(threadId);
    expect(part).toMatchObject({ state: "output-error", errorText: sentence });
    expect(toolResultFor(scripted(t), 1, "call-task").output).toEqual({
      type: "error-text",
      value: sentence,
    });
  });

  it("a thrown error keeps its message by default", async () => {
    const reports: RuntimeErrorReport[] = [];
    const t = await createTestRuntime({
      agent: defineAgent({
        tools: {
          createTask: createTask(() => {
            throw new Error("Task store is read-only until 10:00 UTC.");
          }),
        },
      }),
      model: callCreateTask({ title: "Write spec" }),
      onRuntimeError: (report) => reports.push(report),
    });
    const threadId = await t.createThread();
    const snapshot = await t.send(threadId, "make a task");

    const [part] = await t.toolParts(threadId);
    expect(part).toMatchObject({
      state: "output-error",
      errorText: "Task store is read-only until 10:00 UTC.",
    });
    expect(snapshot.runs.at(-1)?.status).toBe("completed");
    expect(reports.map((report) => report.phase)).toContain("tool");
  });

  it("mapError projects a thrown error into the model-visible text", async () => {
    const seen: Array<{ toolName: string; toolCallId: string; message: string }> = [];
    const t = await createTestRuntime({
      agent: defineAgent({
        tools: {
          createTask: createTask(() => {
            throw new Error("connect ECONNREFUSED 10.0.0.7:5432");
          }),
        },
        mapError: ({ error, toolName, toolCallId }: any) => {
          seen.push({ toolName, toolCallId, message: (error as Error).message });
          return "The task store is unavailable; try again in a minute.";
        },
      }),
      model: callCreateTask({ title: "Write spec" }),
    });
    const threadId = await t.createThread();
    await t.send(threadId, "make a task");

    const [part] = await t.toolParts(threadId);
    expect(part).toMatchObject({
      state: "output-error",
      errorText: "The task store is unavailable; try again in a minute.",
    });
    expect(JSON.stringify(await t.snapshot(threadId))).not.toContain("ECONNREFUSED");
    expect(seen).toEqual([
      { toolName: "createTask", toolCallId: "call-task", message: "connect ECONNREFUSED 10.0.0.7:5432" },
    ]);
  });

  it("mapError returning undefined keeps the thrown message", async () => {
    const t = await createTestRuntime({
      agent: defineAgent({
        tools: {
          createTask: createTask(() => {
            throw new Error("Title already used by task t-7.");
          }),
        },
        mapError: () => undefined,
      }),
      model: callCreateTask({ title: "Write spec" }),
    });
    const threadId = await t.createThread();
    await t.send(threadId, "make a task");

    const [part] = await t.toolParts(threadId);
    expect(part).toMatchObject({ state: "output-error", errorText: "Title already used by task t-7." });
  });

  it("an onOutput hook that throws fails the run with a redacted message and reports the detail", async () => {
    const reports: RuntimeErrorReport[] = [];
    const t = await createTestRuntime({
      agent: defineAgent({
        tools: {
          createTask: {
            tool: createTask(() => ({ taskId: "t1" })),
            onOutput: () => {
              throw new Error("recents table missing: secret-dsn://admin@db");
            },
          },
        },
      }),
      model: callCreateTask({ title: "Write spec" }),
      onRuntimeError: (report) => reports.push(report),
    });
    const threadId = await t.createThread();
    const snapshot = await t.send(threadId, "make a task");

    const run = snapshot.runs.at(-1)!;
    expect(run.status).toBe("failed");
    expect(run.error).toBe(REDACTED_ERROR_MESSAGE);
    expect(JSON.stringify(snapshot)).not.toContain("secret-dsn");
    expect(scripted(t).calls).toHaveLength(1);
    const detail = reports.map((report) => {
      const error = report.error as Error & { cause?: unknown };
      return `${error.message} ${(error.cause as Error | undefined)?.message ?? ""}`;
    });
    expect(detail.some((text) => text.includes("secret-dsn://admin@db"))).toBe(true);
  });

  it("ctx.input is the parsed input with defaults, and ctx.thread and ctx.agentId locate the call", async () => {
    const seen: any[] = [];
    const tagTask = defineTool({
      id: "test.tag-task.v1",
      description: "Tag a task",
      inputSchema: z.object({ taskId: z.string(), tag: z.string().default("triage") }),
      execute: (ctx) => {
        seen.push({ input: ctx.input, thread: ctx.thread, agentId: ctx.agentId });
        return null;
      },
    });
    const t = await createTestRuntime({
      agent: defineAgent({ name: "planner", tools: { tagTask } }),
      model: [
        { toolCalls: [{ toolName: "tagTask", toolCallId: "call-tag", input: { taskId: "t-1" } }] },
        { text: "ok" },
      ],
    });
    const threadId = await t.createThread();
    const snapshot = await t.send(threadId, "tag it");

    expect(seen).toEqual([
      {
        input: { taskId: "t-1", tag: "triage" },
        thread: { threadId, runId: snapshot.runs[0]!.runId, toolCallId: "call-tag", toolName: "tagTask" },
        agentId: "planner",
      },
    ]);
  });

  it("a tool that returns nothing succeeds and the model reads JSON null", async () => {
    const ping = defineTool({
      id: "test.fire-and-forget.v1",
      description: "Fire and forget",
      inputSchema: z.object({}),
      execute: () => undefined,
    });
    const t = await createTestRuntime({
      agent: defineAgent({ tools: { ping } }),
      model: [{ toolCalls: [{ toolName: "ping", toolCallId: "call-ping", input: {} }] }, { text: "sent" }],
    });
    const threadId = await t.createThread();
    await t.send(threadId, "ping");

    const [part] = await t.toolParts(threadId);
    expect(part).toMatchObject({ state: "output-available" });
    expect(part!.output ?? null).toBeNull();
    expect(toolResultFor(scripted(t), 1, "call-ping").output).toEqual({ type: "json", value: null });
  });
});
