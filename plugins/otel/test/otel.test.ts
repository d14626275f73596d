import {
  BasicTracerProvider,
  InMemorySpanExporter,
  type ReadableSpan,
  SimpleSpanProcessor,
} from "@opentelemetry/sdk-trace-base";
import { defineAgent, defineTool } from "@pai/core";
import { createTestRuntime } from "@pai/core/testing";
import { otelPlugin } from "@pai/otel";
import { memoryStorage } from "@pai/storage-memory";
import { describe, expect, it } from "vitest";
import { z } from "zod";

const approve = defineTool({
  id: "test.approve",
  description: "Transfer money after approval.",
  inputSchema: z.object({ amount: z.number() }),
  suspend: {
    approval: {
      suspendSchema: z.object({ amount: z.number() }),
      resumeSchema: z.object({ ok: z.boolean() }),
    },
  },
  execute: (ctx) =>
    ctx.entry.type === "initial"
      ? ctx.suspend("approval", { amount: ctx.input.amount })
      : { transferred: ctx.entry.resume.ok ? ctx.input.amount : 0 },
});

const broken = defineTool({
  id: "test.broken",
  description: "Always fails.",
  inputSchema: z.object({ secret: z.string() }),
  execute: ({ input, fail }) => fail(`cannot handle ${input.secret}`),
});

function tracing() {
  const exporter = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  return { exporter, tracer: provider.getTracer("test") };
}

type Node = { name: string; attributes: Record<string, unknown>; status: number; children: Node[] };

/** The finished spans as a tree of names, children in start order. */
function tree(spans: ReadableSpan[]): Node[] {
  const sorted = [...spans].sort((a, b) => {
    const [as, an] = a.startTime;
    const [bs, bn] = b.startTime;
    return as - bs || an - bn;
  });
  const nodes = new Map<string, Node>();
  for (const span of sorted) {
    nodes.set(span.spanContext().spanId, {
      name: span.name,
      attributes: { ...span.attributes },
      status: span.status.code,
      children: [],
    });
  }
  const roots: Node[] = [];
  for (const span of sorted) {
    const node = nodes.get(span.spanContext().spanId)!;
    const parentId = span.parentSpanContext?.spanId;
    const parent = parentId ? nodes.get(parentId) : undefined;
    if (parent) parent.children.push(node);
    else roots.push(node);
  }
  return roots;
}

const shape = (node: Node): unknown =>
  node.children.length === 0 ? node.name : { [node.name]: node.children.map(shape) };

describe("@pai/otel", () => {
  it("produces the span tree of a run that suspends and resumes", async () => {
    const { exporter, tracer } = tracing();
    const runtime = await createTestRuntime({
      storage: memoryStorage(),
      agent: defineAgent({ tools: { approve } }),
      plugins: [otelPlugin({ tracer })],
      model: [
        { toolCalls: [{ toolName: "approve", input: { amount: 5 }, toolCallId: "call-1" }] },
        { text: "Transferred." },
      ],
    });
    const threadId = await runtime.createThread();
    await runtime.send(threadId, "pay 5");
    const action = await runtime.action(threadId, "approve.approval");
    // While the run waits, only the first step and its spans have finished.
    expect(
      exporter
        .getFinishedSpans()
        .map((span) => span.name)
        .sort(),
    ).toEqual(["pai.model", "pai.step", "pai.tool"]);
    await runtime.submit(threadId, action.actionId, { ok: true });
    await runtime.close();

    const roots = tree(exporter.getFinishedSpans());
    expect(roots).toHaveLength(1);
    expect(roots.map(shape)).toEqual([
      {
        "pai.run": [
          { "pai.step": ["pai.model", "pai.tool"] },
          { "pai.suspension": ["pai.action.resolve"] },
          "pai.tool",
          { "pai.step": ["pai.model"] },
        ],
      },
    ]);
    const run = roots[0]!;
    const runId = run.attributes["pai.run.id"];
    expect(run.attributes).toMatchObject({ "pai.thread.id": threadId, "pai.run.status": "completed" });
    const [step1, suspension, resumedTool, step2] = run.children as [Node, Node, Node, Node];
    expect(step1.attributes).toMatchObject({ "pai.step": 1, "pai.run.id": runId });
    expect(step1.children[0]!.attributes).toMatchObject({ "gen_ai.request.model": "scripted" });
    expect(step1.children[1]!.attributes).toMatchObject({
      "pai.tool.name": "approve",
      "pai.tool.call.id": "call-1",
      "pai.tool.entry": "initial",
      "pai.tool.outcome": "suspended",
    });
    expect(suspension.attributes).toMatchObject({
      "pai.action.id": action.actionId,
      "pai.action.name": "approve.approval",
      "pai.action.kind": "suspend",
      "pai.action.resolution": "submit",
    });
    expect(suspension.children[0]!.attributes).toMatchObject({ "pai.action.resolution": "submit" });
    expect(resumedTool.attributes).toMatchObject({
      "pai.tool.entry": "resume",
      "pai.tool.outcome": "output",
    });
    expect(step2.attributes).toMatchObject({ "pai.step": 2 });
    // Ids only: no inputs, outputs or messages in any attribute.
    const everything = JSON.stringify(exporter.getFinishedSpans().map((span) => span.attributes));
    expect(everything).not.toMatch(/amount|transferred|pay 5|Transferred/);
  });

  it("marks failed tool calls without recording their text unless asked", async () => {
    for (const recordErrorText of [false, true]) {
      const { exporter, tracer } = tracing();
      const runtime = await createTestRuntime({
        storage: memoryStorage(),
        agent: defineAgent({ tools: { broken } }),
        plugins: [otelPlugin({ tracer, recordErrorText })],
        model: [
          { toolCalls: [{ toolName: "broken", input: { secret: "hunter2" }, toolCallId: "b1" }] },
          { text: "sorry" },
        ],
      });
      const threadId = await runtime.createThread();
      await runtime.send(threadId, "go");
      await runtime.close();
      const tool = exporter.getFinishedSpans().find((span) => span.name === "pai.tool")!;
      expect(tool.status.code).toBe(2);
      expect(tool.status.message).toBe(recordErrorText ? "cannot handle hunter2" : "The tool call failed.");
    }
  });
});
