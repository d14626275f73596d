// Fixtures shared by the RunChunks tests: a thread whose run r1 has committed steps.
import type { ThreadSnapshot } from "@pai/core";
import { readUIMessageStream, type UIMessage, type UIMessageChunk } from "ai";

export const NOW = "2026-01-01T00:00:00.000Z";
export const isApproval = () => false;

export function snapshot(status: "running" | "completed", parts: unknown[], version = 3): ThreadSnapshot {
  return {
    thread: {
      threadId: "t",
      scopeKey: "s",
      userKey: null,
      agentId: "a",
      title: null,
      status: status === "running" ? "running" : "idle",
      version,
      activeRunId: status === "running" ? "r1" : null,
      metadata: null,
      createdAt: NOW,
      updatedAt: NOW,
    },
    messages: [
      {
        threadId: "t",
        messageId: "m1",
        position: 1,
        role: "assistant",
        message: { id: "m1", role: "assistant", parts: parts as never },
        runId: "r1",
        createdAt: NOW,
        updatedAt: NOW,
      },
    ],
    runs: [
      {
        threadId: "t",
        runId: "r1",
        status,
        trigger: { type: "message", messageId: "u1" },
        step: 2,
        messageId: "m1",
        clientTools: [],
        clientData: null,
        error: null,
        createdAt: NOW,
        updatedAt: NOW,
        finishedAt: null,
      },
    ],
    actions: [],
    toolData: [
      {
        threadId: "t",
        toolCallId: "c1",
        channel: "progress",
        itemId: "i1",
        value: { pct: 1 },
        updatedAt: NOW,
      },
    ],
  };
}

export const firstStep = [
  { type: "step-start" },
  { type: "reasoning", text: "Thinking.", state: "done" },
  { type: "text", text: "Let me look.", state: "done" },
  {
    type: "tool-lookup",
    toolCallId: "c1",
    state: "output-available",
    input: { q: "x" },
    output: { hits: 2 },
  },
];
export const twoSteps = [
  ...firstStep,
  { type: "step-start" },
  { type: "text", text: "Found 2.", state: "done" },
];

export async function rebuild(chunks: UIMessageChunk[]): Promise<UIMessage | undefined> {
  const stream = new ReadableStream<UIMessageChunk>({
    start(controller) {
      for (const chunk of chunks) controller.enqueue(chunk);
      controller.close();
    },
  });
  let last: UIMessage | undefined;
  for await (const message of readUIMessageStream({ stream })) last = message;
  return last;
}
