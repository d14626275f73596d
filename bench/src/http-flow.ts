// The suspend -> resume flow as the latency tables run it outside the service: the AI SDK's own
// approval round trip, and PAI's flow over tRPC HTTP (two waiting requests, or the four of
// earlier passes), with the warm-up an HTTP stack needs.
import type { Pai } from "@pai/core";
import { generateText, stepCountIs, tool } from "ai";
import { z } from "zod";
import { turnModel } from "./fixtures.ts";
import { WAIT_MS } from "./scenarios.ts";
import { type BenchHost, type FlowStart, requestsOf } from "./trpc-host.ts";

const approvalModel = turnModel("approve");
const approvalTools = {
  approve: tool({
    description: "Ask for approval.",
    inputSchema: z.object({ summary: z.string() }),
    execute: async () => ({ approved: true }),
  }),
};

/** The AI SDK's own approval round trip: a call that asks, then the answer and the final step. */
export async function bareApproval() {
  const first = await generateText({
    model: approvalModel,
    tools: approvalTools,
    toolApproval: { approve: "user-approval" },
    prompt: "ship?",
  });
  const request = first.content.find((part) => part.type === "tool-approval-request") as
    | { approvalId: string }
    | undefined;
  if (!request) throw new Error("bench: the AI SDK did not ask for approval");
  await generateText({
    model: approvalModel,
    tools: approvalTools,
    toolApproval: { approve: "user-approval" },
    messages: [
      { role: "user", content: "ship?" },
      ...first.response.messages,
      {
        role: "tool",
        content: [{ type: "tool-approval-response", approvalId: request.approvalId, approved: true }],
      },
    ],
    stopWhen: stepCountIs(2),
  });
}

export const bareHttpName = (start: FlowStart) => `bare tRPC HTTP, ${requestsOf(start)} no-op requests`;

/** The rows of the flow that creates the thread and then sends to it, as earlier passes measured it. */
export const THEN_SEND = ", create then send";

/**
 * Suspend -> resume as a client does it over tRPC HTTP: two requests that each answer once their
 * run stopped (`waitMs`), or the four of earlier passes (create, send, get, submit).
 */
export async function overHttp(pai: Pai, host: BenchHost, start: FlowStart = "waiting") {
  const { client } = host;
  const message = { text: "ship?" };
  if (start === "waiting") {
    const created = await client.pai.threads.create.mutate({ message, waitMs: WAIT_MS });
    const pending = created.settled?.view.pending[0];
    if (!pending) throw new Error("bench: expected a pending action over HTTP");
    const answered = await client.pai.actions.submit.mutate({
      threadId: created.threadId,
      actionId: pending.ref.actionId,
      payload: { approved: true },
      waitMs: WAIT_MS,
    });
    if (!answered.settled?.done) throw new Error("bench: the run did not finish over HTTP");
    return;
  }
  const thread = await client.pai.threads.create.mutate({});
  await client.pai.threads.send.mutate({ threadId: thread.threadId, message });
  // The client learns the run parked (a watch would push it); waiting in-process keeps the HTTP cost isolated.
  await pai.waitForIdle(thread.threadId);
  const snapshot = await client.pai.threads.get.query({ threadId: thread.threadId });
  const action = snapshot.pending[0];
  if (!action) throw new Error("bench: expected a pending action over HTTP");
  await client.pai.actions.submit.mutate({
    threadId: thread.threadId,
    actionId: action.ref.actionId,
    payload: { approved: true },
  });
  await pai.waitForIdle(thread.threadId);
}

/**
 * A fresh HTTP stack (undici, tRPC) runs about twice as slow for its first seconds while V8
 * optimizes it; a host that serves traffic is warm, so each HTTP flow runs for 2 s first.
 */
export async function warmHttp(flows: Array<() => Promise<unknown>>) {
  for (const fn of flows) {
    const until = performance.now() + 2000;
    while (performance.now() < until) await fn();
  }
}
