import { defineAgent, defineTool } from "@pai/core";
import { projectThreadState } from "@pai/core/protocol";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { createTestRuntime } from "../support/test-runtime.js";
import { scripted, toolResultFor } from "./_helpers.js";

// The three flows of spec 05 (suspend and resume), written as the spec shows them.

const collectReportDetails = defineTool({
  id: "collectReportDetails",
  description: "Collect missing report details from the user",
  inputSchema: z.object({ reportId: z.string(), knownSummary: z.string() }),
  outputSchema: z.object({ audience: z.string(), deadline: z.string().optional() }),
  suspend: {
    collectDetails: {
      suspendSchema: z.object({
        prompt: z.string(),
        missingFields: z.array(z.enum(["audience", "deadline"])),
      }),
      resumeSchema: z.object({ audience: z.string(), deadline: z.string().optional() }),
    },
  },
  execute: async (ctx) => {
    if (ctx.entry.type === "initial") {
      return ctx.suspend("collectDetails", {
        prompt: "Who is this report for, and when is it due?",
        missingFields: ["audience", "deadline"],
      });
    }
    if (ctx.entry.type === "resume" && ctx.entry.name === "collectDetails") {
      return { audience: ctx.entry.resume.audience, deadline: ctx.entry.resume.deadline };
    }
    throw new Error("Unsupported tool entry");
  },
});

const draftFrom = async (details: { topic: string }) => `Draft about ${details.topic}`;

const draftReport = defineTool({
  id: "draftReport",
  description: "Draft a report with the user's input",
  inputSchema: z.object({ reportId: z.string() }),
  outputSchema: z.union([
    z.object({ status: z.literal("rejected"), comment: z.string().optional() }),
    z.object({ fileId: z.string() }),
  ]),
  suspend: {
    collectDetails: {
      suspendSchema: z.object({ prompt: z.string() }),
      resumeSchema: z.object({ topic: z.string() }),
    },
    approveDraft: {
      suspendSchema: z.object({ summary: z.string() }),
      resumeSchema: z.object({ approved: z.boolean(), comment: z.string().optional() }),
    },
    attachReferenceFile: {
      suspendSchema: z.object({ reportId: z.string() }),
      resumeSchema: z.object({ fileId: z.string() }),
    },
  },
  execute: async (ctx) => {
    if (ctx.entry.type === "initial") {
      return ctx.suspend("collectDetails", { prompt: "What should this report include?" });
    }
    if (ctx.entry.type !== "resume") throw new Error("Unsupported tool entry");
    if (ctx.entry.name === "collectDetails") {
      return ctx.suspend("approveDraft", { summary: await draftFrom(ctx.entry.resume) });
    }
    if (ctx.entry.name === "approveDraft") {
      if (!ctx.entry.resume.approved) return { status: "rejected", comment: ctx.entry.resume.comment };
      return ctx.suspend("attachReferenceFile", { reportId: ctx.input.reportId });
    }
    if (ctx.entry.name === "attachReferenceFile") return { fileId: ctx.entry.resume.fileId };
    // The spec's example ends here; TypeScript still sees an implicit `undefined` return,
    // which the typed output rejects, so an exhaustive ending is needed.
    throw new Error("Unsupported tool entry");
  },
});

const requestApproval = defineTool({
  id: "requestApproval",
  description: "Request approval before sending a report",
  inputSchema: z.object({ summary: z.string() }),
  outputSchema: z.object({ approved: z.boolean(), comment: z.string().optional() }),
  suspend: {
    approval: {
      suspendSchema: z.object({ prompt: z.string() }),
      resumeSchema: z.object({ approved: z.boolean(), comment: z.string().optional() }),
    },
  },
  execute: async (ctx) => {
    if (ctx.entry.type === "initial") return ctx.suspend("approval", { prompt: ctx.input.summary });
    if (ctx.entry.type === "resume" && ctx.entry.name === "approval") return ctx.entry.resume;
    throw new Error("Unsupported tool entry");
  },
});

const agent = defineAgent({ tools: { collectReportDetails, draftReport, requestApproval } });

async function start(toolName: string, input: unknown, finalText: string) {
  const t = await createTestRuntime({
    agent,
    model: [{ toolCalls: [{ toolName, toolCallId: "call-1", input }] }, { text: finalText }],
  });
  const threadId = await t.createThread();
  const waiting = await t.send(threadId, "please help with the report");
  return { t, threadId, waiting };
}

describe("spec flows", () => {
  it("collectReportDetails asks for missing details and returns them", async () => {
    const { t, threadId, waiting } = await start(
      "collectReportDetails",
      { reportId: "r-1", knownSummary: "Q3 revenue" },
      "Got it.",
    );
    const [pending] = projectThreadState(waiting).pending;
    expect(pending).toMatchObject({
      name: "collectReportDetails.collectDetails",
      input: {
        prompt: "Who is this report for, and when is it due?",
        missingFields: ["audience", "deadline"],
      },
      origin: { toolName: "collectReportDetails", suspendName: "collectDetails", toolCallId: "call-1" },
    });

    const done = await t.submit(threadId, pending!.ref.actionId, {
      audience: "Product team",
      deadline: "Friday",
    });
    const [part] = await t.toolParts(threadId);
    expect(part).toMatchObject({
      type: "tool-collectReportDetails",
      state: "output-available",
      output: { audience: "Product team", deadline: "Friday" },
    });
    expect(done.runs.at(-1)?.status).toBe("completed");
    expect(await t.lastText(threadId)).toBe("Got it.");
  });

  it("draftReport walks through its three wait points to a file id", async () => {
    const { t, threadId } = await start("draftReport", { reportId: "r-7" }, "Report drafted.");

    const collect = await t.action(threadId, "draftReport.collectDetails");
    expect(collect.input).toEqual({ prompt: "What should this report include?" });
    await t.submit(threadId, collect.actionId, { topic: "churn" });

    const approve = await t.action(threadId, "draftReport.approveDraft");
    expect(approve).toMatchObject({ suspendName: "approveDraft", input: { summary: "Draft about churn" } });
    const afterApprove = await t.submit(threadId, approve.actionId, { approved: true });
    expect(afterApprove.runs.at(-1)?.status).toBe("waiting");

    const attach = await t.action(threadId, "draftReport.attachReferenceFile");
    expect(attach.input).toEqual({ reportId: "r-7" });
    const done = await t.submit(threadId, attach.actionId, { fileId: "file-42" });

    const [part] = await t.toolParts(threadId);
    expect(part).toMatchObject({ state: "output-available", output: { fileId: "file-42" } });
    const projected = projectThreadState(done).messages.flatMap((message) => message.parts) as any[];
    const suspensions = projected.find((candidate) => candidate.toolCallId === "call-1").suspensions;
    expect(suspensions.map((item: any) => [item.name, item.state])).toEqual([
      ["collectDetails", "submitted"],
      ["approveDraft", "submitted"],
      ["attachReferenceFile", "submitted"],
    ]);
    expect(scripted(t).calls).toHaveLength(2);
    expect(await t.lastText(threadId)).toBe("Report drafted.");
  });

  it("draftReport returns a typed rejection when the draft is not approved", async () => {
    const { t, threadId } = await start("draftReport", { reportId: "r-8" }, "Understood, not sending.");
    await t.submit(threadId, "draftReport.collectDetails", { topic: "pricing" });
    const done = await t.submit(threadId, "draftReport.approveDraft", {
      approved: false,
      comment: "Too long",
    });

    const [part] = await t.toolParts(threadId);
    expect(part).toMatchObject({
      state: "output-available",
      output: { status: "rejected", comment: "Too long" },
    });
    expect(done.actions.map((action) => action.name)).toEqual([
      "draftReport.collectDetails",
      "draftReport.approveDraft",
    ]);
    expect(done.runs.at(-1)?.status).toBe("completed");
  });

  it("requestApproval returns the submitted decision as the tool output", async () => {
    const { t, threadId } = await start(
      "requestApproval",
      { summary: "Send Q3 report to board" },
      "Sending.",
    );
    const action = await t.action(threadId, "requestApproval.approval");
    expect(action.input).toEqual({ prompt: "Send Q3 report to board" });

    await t.submit(threadId, action.actionId, { approved: true, comment: "Send it." });
    const [part] = await t.toolParts(threadId);
    expect(part).toMatchObject({
      state: "output-available",
      output: { approved: true, comment: "Send it." },
    });
    expect(toolResultFor(scripted(t), 1, "call-1").output).toEqual({
      type: "json",
      value: { approved: true, comment: "Send it." },
    });
  });

  it("requestApproval reports a refusal as typed output, not a failure", async () => {
    const { t, threadId } = await start("requestApproval", { summary: "Send draft" }, "Not sending.");
    await t.submit(threadId, "requestApproval.approval", { approved: false });
    const [part] = await t.toolParts(threadId);
    expect(part).toMatchObject({ state: "output-available", output: { approved: false } });
  });
});
