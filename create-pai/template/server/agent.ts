import { defineAgent, defineTool } from "@pai/core";
import { z } from "zod";

/** Waits for the user to approve or deny; the run pauses durably until they answer. */
export const requestApproval = defineTool({
  id: "app.request-approval.v1",
  description:
    "Ask the user to approve an action before doing it. Use it before anything on the user's behalf.",
  inputSchema: z.object({ summary: z.string().describe("What needs approval, in one sentence.") }),
  outputSchema: z.object({ approved: z.boolean() }),
  suspend: {
    approval: {
      suspendSchema: z.object({ prompt: z.string() }),
      resumeSchema: z.object({ approved: z.boolean() }),
    },
  },
  execute: (ctx) =>
    ctx.entry.type === "initial" ? ctx.suspend("approval", { prompt: ctx.input.summary }) : ctx.entry.resume,
});

/** A client tool: no `execute` here, the browser answers it (see web/pai.ts). */
export const getLocalTime = defineTool({
  id: "app.get-local-time.v1",
  description: "Read the user's local time and time zone from their browser.",
  inputSchema: z.object({}),
  outputSchema: z.object({ time: z.string(), timeZone: z.string() }),
});

export const agent = defineAgent({
  name: "assistant",
  instructions: [
    "You are a helpful assistant. Before doing anything on the user's behalf, call requestApproval",
    "with a one-sentence summary and act only if it is approved. Use getLocalTime for the user's time.",
  ].join(" "),
  tools: { requestApproval, getLocalTime },
  maxSteps: 6,
});

/** The agent's type: the web page types its bindings from it (a type-only import). */
export type AppAgent = typeof agent;
