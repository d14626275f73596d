// The host app's agent: one tool that waits for the signed-in user's approval.
import { defineAgent, defineTool } from "@pai/core";
import { z } from "zod";

export const requestApproval = defineTool({
  id: "host.request-approval.v1",
  description: "Ask the signed-in user to approve before acting",
  inputSchema: z.object({ summary: z.string() }),
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

export const agent = defineAgent({
  name: "assistant",
  instructions: "Ask for approval before sending anything.",
  tools: { requestApproval },
});
