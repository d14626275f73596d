// The demo agent of the deployment example: one tool that waits for a person's approval, one
// long task that reports durable progress, and a deterministic model for running without a key.

import { defineAgent, defineTool } from "@pai/core";
import { z } from "zod";

/** Pauses at the `approval` wait point until someone submits `{ approved }` (from any instance). */
export const requestApproval = defineTool({
  id: "deploy-demo.request-approval.v1",
  description: "Ask a person to approve an action before it is carried out.",
  inputSchema: z.object({ summary: z.string().min(1).max(500) }),
  outputSchema: z.object({ approved: z.boolean(), note: z.string().optional() }),
  suspend: {
    approval: {
      suspendSchema: z.object({ prompt: z.string() }),
      resumeSchema: z.object({ approved: z.boolean(), note: z.string().max(500).optional() }),
    },
  },
  execute: (ctx) =>
    ctx.entry.type === "initial" ? ctx.suspend("approval", { prompt: ctx.input.summary }) : ctx.entry.resume,
});

/**
 * Works for `seconds` seconds, writing its progress as durable tool data once a second. It stops
 * early when its signal aborts (run cancelled, runtime closing). When the process running it dies,
 * the call is recorded as interrupted by the instance that adopts the run; it is never re-run.
 */
export const longTask = defineTool({
  id: "deploy-demo.long-task.v1",
  description: "Run a long background task for the given number of seconds.",
  inputSchema: z.object({ seconds: z.number().int().min(1).max(3600) }),
  outputSchema: z.object({ seconds: z.number().int() }),
  dataSchemas: { progress: z.object({ done: z.number().int(), total: z.number().int() }) },
  execute: async ({ input, data, signal }) => {
    for (let done = 0; done < input.seconds; done++) {
      await data.write("progress", { done, total: input.seconds }, { id: "progress" });
      await sleep(1_000, signal);
    }
    await data.write("progress", { done: input.seconds, total: input.seconds }, { id: "progress" });
    return { seconds: input.seconds };
  },
});

function sleep(ms, signal) {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason);
    const timer = setTimeout(() => {
      signal.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal.reason);
    };
    signal.addEventListener("abort", onAbort, { once: true });
  });
}

export const agent = defineAgent({
  name: "ops",
  instructions:
    "You are an operations assistant. Call requestApproval before any change, and longTask for long jobs. Keep answers short.",
  tools: { requestApproval, longTask },
  maxSteps: 6,
});

/**
 * The answer of the deterministic demo model to one model call (see `model.mjs`). It looks only at
 * the prompt, so every instance answers a call the same way: after a tool result it reports the
 * result; otherwise "approve ..." asks for approval, "... N seconds" starts the long task, and
 * anything else gets a short help text. Tool call ids are random: ids the scripted model counts
 * itself restart at 1 in every process, and they must be unique within a thread.
 */
export function demoStep(call) {
  const last = call.prompt.at(-1);
  if (last?.role === "tool") {
    const result = last.content.find((part) => part.type === "tool-result");
    const output = result?.output;
    if (!output) return { text: "Done." };
    if (output.type === "error-text" || output.type === "error-json") {
      const reason = output.type === "error-text" ? output.value : JSON.stringify(output.value);
      return { text: `${result.toolName} did not finish: ${reason}` };
    }
    if (result.toolName === "requestApproval") {
      const value = output.type === "json" ? output.value : null;
      return { text: value?.approved ? "Approved, carrying on." : "Not approved, nothing was changed." };
    }
    return { text: `${result.toolName} finished.` };
  }
  const text =
    last?.role === "user"
      ? last.content
          .filter((part) => part.type === "text")
          .map((part) => part.text)
          .join(" ")
      : "";
  const toolCallId = `call-${globalThis.crypto.randomUUID()}`;
  if (/approv/i.test(text)) {
    return {
      text: "I need your approval first.",
      toolCalls: [{ toolName: "requestApproval", toolCallId, input: { summary: text.slice(0, 500) } }],
    };
  }
  const seconds = /(\d{1,4})\s*(?:s\b|sec|second)/i.exec(text);
  if (seconds) {
    return {
      text: "Starting the long task.",
      toolCalls: [
        {
          toolName: "longTask",
          toolCallId,
          input: { seconds: Math.min(3600, Math.max(1, Number(seconds[1]))) },
        },
      ],
    };
  }
  return { text: 'Try "approve the release" or "run a task for 30 seconds".' };
}
