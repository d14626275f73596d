import { type ClientToolSnapshot, defineAgent, defineTool, type RuntimeErrorReport } from "@pai/core";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { createTestRuntime } from "../support/test-runtime.js";
import { projectedPart, rejection, scripted, toolNamesInCall, toolResultFor } from "./_helpers.js";

// Tool names are looked up by name in plain objects: a name that is also an `Object.prototype`
// member must find only what was declared under it, never the inherited member.

const lookup = defineTool({
  id: "test.prototype-tool-names.lookup.v1",
  description: "Look something up",
  inputSchema: z.object({}),
  execute: () => "found",
});

function clientTool(name: string): ClientToolSnapshot {
  return {
    name,
    description: `The client's ${name}`,
    inputSchema: { type: "object", properties: { q: { type: "string" } } },
    outputSchema: {
      type: "object",
      properties: { answer: { type: "string" } },
      required: ["answer"],
      additionalProperties: false,
    },
  };
}

async function runtime(script: Parameters<typeof createTestRuntime>[0]["model"]) {
  const reports: RuntimeErrorReport[] = [];
  const t = await createTestRuntime({
    agent: defineAgent({ tools: { lookup } }),
    model: script,
    onRuntimeError: (report) => reports.push(report),
  });
  const threadId = await t.createThread();
  return { t, threadId, reports };
}

describe("client tools named like Object.prototype members", () => {
  for (const name of ["constructor", "toString"]) {
    it(`a client tool named ${name} is offered, waits for the client and the client's answer completes the run`, async () => {
      const { t, threadId, reports } = await runtime([
        { toolCalls: [{ toolName: name, toolCallId: "call-proto", input: { q: "hi" } }] },
        { text: "Thanks." },
      ]);
      const waiting = await t.send(threadId, "ask the client", { clientTools: [clientTool(name)] });

      expect(toolNamesInCall(scripted(t), 0)).toEqual([name, "lookup"].sort());
      expect(waiting.runs.at(-1)?.status).toBe("waiting");
      expect(await t.action(threadId, `${name}.output`)).toMatchObject({
        kind: "output",
        toolName: name,
        toolCallId: "call-proto",
        state: "pending",
      });
      expect(projectedPart(waiting, "call-proto")).toMatchObject({
        type: "dynamic-tool",
        toolName: name,
        state: "input-available",
        input: { q: "hi" },
      });

      // The client tool's own output schema applies, not anything inherited.
      const invalid = await rejection(t.submit(threadId, `${name}.output`, { answer: 42 }));
      expect(invalid.code).toBe("INVALID_INPUT");
      expect((await t.pending(threadId)).map((action) => action.actionId)).toEqual(["call-proto"]);

      const done = await t.submit(threadId, `${name}.output`, { answer: "yes" });
      expect(projectedPart(done, "call-proto")).toMatchObject({
        type: "dynamic-tool",
        state: "output-available",
        output: { answer: "yes" },
      });
      expect(toolResultFor(scripted(t), 1, "call-proto").output).toEqual({
        type: "json",
        value: { answer: "yes" },
      });
      expect(done.runs.at(-1)?.status).toBe("completed");
      expect(reports).toEqual([]);
    });
  }

  it("a client tool named valueOf can be cancelled and failed like any other", async () => {
    const { t, threadId, reports } = await runtime([
      { toolCalls: [{ toolName: "valueOf", toolCallId: "call-1", input: {} }] },
      { toolCalls: [{ toolName: "valueOf", toolCallId: "call-2", input: {} }] },
      { text: "Understood." },
    ]);
    const tools = [clientTool("valueOf")];
    await t.send(threadId, "first", { clientTools: tools });
    const cancelled = await t.cancel(threadId, "valueOf.output", "not now");
    expect(projectedPart(cancelled, "call-1").state).toBe("output-error");
    expect(cancelled.runs.at(-1)?.status).toBe("waiting");

    const failed = await t.fail(threadId, "valueOf.output", "the client broke");
    expect(projectedPart(failed, "call-2")).toMatchObject({ state: "output-error" });
    expect(failed.runs.at(-1)?.status).toBe("completed");
    expect(reports).toEqual([]);
  });

  it("a client tool named hasOwnProperty works next to a backend tool called in the same step", async () => {
    const { t, threadId, reports } = await runtime([
      {
        toolCalls: [
          { toolName: "lookup", toolCallId: "call-backend", input: {} },
          { toolName: "hasOwnProperty", toolCallId: "call-client", input: {} },
        ],
      },
      { text: "Both answered." },
    ]);
    const waiting = await t.send(threadId, "both", { clientTools: [clientTool("hasOwnProperty")] });
    expect(projectedPart(waiting, "call-backend")).toMatchObject({
      type: "tool-lookup",
      state: "output-available",
      output: "found",
    });
    expect(waiting.runs.at(-1)?.status).toBe("waiting");
    const done = await t.submit(threadId, "hasOwnProperty.output", { answer: "ok" });
    expect(projectedPart(done, "call-client").state).toBe("output-available");
    expect(done.runs.at(-1)?.status).toBe("completed");
    expect(reports).toEqual([]);
  });

  it("names starting with __ (such as __proto__) are refused as reserved and start no run", async () => {
    const { t, threadId } = await runtime([]);
    for (const name of ["__proto__", "__defineGetter__", "__lookupSetter__"]) {
      const error = await rejection(t.send(threadId, "hi", { clientTools: [clientTool(name)] }));
      expect(error.code).toBe("INVALID_INPUT");
      expect(error.message).toContain(name);
      expect(error.message).toMatch(/reserved/i);
    }
    expect((await t.snapshot(threadId)).runs).toEqual([]);
    expect(scripted(t).calls).toHaveLength(0);
  });
});

describe("a model call of an undeclared name that is an Object.prototype member", () => {
  for (const name of ["constructor", "toString", "hasOwnProperty", "__proto__"]) {
    it(`${name} is answered as an unavailable tool and the run goes on`, async () => {
      const { t, threadId, reports } = await runtime([
        { toolCalls: [{ toolName: name, toolCallId: "call-x", input: {} }] },
        { text: "I cannot do that." },
      ]);
      const done = await t.send(threadId, "try it");

      expect(toolNamesInCall(scripted(t), 0)).toEqual(["lookup"]);
      expect(projectedPart(done, "call-x")).toMatchObject({
        type: "dynamic-tool",
        toolName: name,
        state: "output-error",
      });
      expect(projectedPart(done, "call-x").errorText).toContain(name);
      expect(toolResultFor(scripted(t), 1, "call-x").output).toMatchObject({ type: "error-text" });
      expect(done.actions).toEqual([]);
      expect(done.runs.at(-1)?.status).toBe("completed");
      expect(reports).toEqual([]);
    });
  }

  it("a client tool named toString does not make an undeclared constructor call available", async () => {
    const { t, threadId, reports } = await runtime([
      { toolCalls: [{ toolName: "constructor", toolCallId: "call-x", input: {} }] },
      { text: "I cannot do that." },
    ]);
    const done = await t.send(threadId, "try it", { clientTools: [clientTool("toString")] });
    expect(projectedPart(done, "call-x")).toMatchObject({ type: "dynamic-tool", state: "output-error" });
    expect(done.actions).toEqual([]);
    expect(done.runs.at(-1)?.status).toBe("completed");
    expect(reports).toEqual([]);
  });
});
