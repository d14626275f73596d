import { codeModeTool } from "@pai/code-mode";
import { defineTool } from "@pai/core";
import { sandbox } from "@pai/sandbox";
import { z } from "zod";

// The playground's demo tools. Each one shows one part of the tool contract; the web UI
// renders each with `useToolRenderer` and answers its pending actions with generated forms.

const pause = (ms: number, signal: AbortSignal) =>
  new Promise<void>((resolve, reject) => {
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

/** A single wait point: a person approves or rejects, with an optional comment. */
export const requestApproval = defineTool({
  id: "playground.request-approval.v1",
  description: "Ask the user to approve an action before it happens. Use for anything risky.",
  inputSchema: z.object({ summary: z.string().describe("What needs approval, in one sentence.") }),
  outputSchema: z.object({ approved: z.boolean(), comment: z.string().optional() }),
  suspend: {
    approval: {
      suspendSchema: z.object({ prompt: z.string() }),
      resumeSchema: z.object({
        approved: z.boolean().describe("Approve"),
        comment: z
          .string()
          .max(200)
          .optional()
          .meta({ title: "Comment", description: "Goes back to the agent with your decision." }),
      }),
      // AI SDK chats answer it with addToolApprovalResponse ({ approved, reason }).
      approval: true,
      // Unanswered for two minutes, the call is cancelled and the model reads why.
      deadline: {
        in: 2 * 60_000,
        onDeadline: "cancel",
        reason:
          "Nobody approved within two minutes, so the action was not taken. Ask again if it is still needed.",
      },
    },
  },
  execute: (ctx) => {
    if (ctx.entry.type === "initial") return ctx.suspend("approval", { prompt: ctx.input.summary });
    if (ctx.entry.name === "approval") return ctx.entry.resume;
    throw new Error("Unsupported tool entry");
  },
});

const reportOutput = z.discriminatedUnion("status", [
  z.object({
    status: z.literal("published"),
    reportId: z.string(),
    title: z.string(),
    audience: z.string(),
    sections: z.number(),
    reference: z.object({ title: z.string(), url: z.string() }),
  }),
  z.object({ status: z.literal("rejected"), reportId: z.string(), comment: z.string().optional() }),
]);

/** Three wait points in one tool call: collect details, approve the draft, attach a reference. */
export const draftReport = defineTool({
  id: "playground.draft-report.v1",
  description:
    "Draft a report with the user: asks for details, shows a draft for approval, then a reference.",
  inputSchema: z.object({ topic: z.string().describe("What the report is about.") }),
  outputSchema: reportOutput,
  dataSchemas: { stage: z.object({ label: z.string() }) },
  suspend: {
    collectDetails: {
      suspendSchema: z.object({ prompt: z.string(), topic: z.string() }),
      resumeSchema: z.object({
        audience: z
          .string()
          .min(2, "Name the audience (at least 2 characters).")
          .meta({ title: "Audience", description: "Who reads the report, e.g. the product team." }),
        sections: z
          .number()
          .int()
          .min(1)
          .max(8)
          .meta({ title: "Number of sections", description: "From 1 to 8; the first one is a summary." }),
        tone: z
          .enum(["formal", "friendly", "brief"])
          .meta({ title: "Tone", description: "How the report reads." }),
      }),
    },
    approveDraft: {
      suspendSchema: z.object({ title: z.string(), outline: z.array(z.string()) }),
      resumeSchema: z.object({
        approved: z.boolean().describe("Approve this draft"),
        comment: z
          .string()
          .max(200)
          .optional()
          .meta({ title: "Comment", description: "What to change, if you reject the draft." }),
      }),
    },
    attachReferenceFile: {
      suspendSchema: z.object({ reportId: z.string(), hint: z.string() }),
      resumeSchema: z.object({
        title: z
          .string()
          .min(1, "Give the reference a title.")
          .meta({ title: "Reference title", description: "The name of the source document." }),
        url: z
          .url("Enter a full URL, e.g. https://example.com/spec.pdf")
          .meta({ title: "Reference URL", description: "A link to it, starting with https://" }),
      }),
    },
  },
  execute: async (ctx) => {
    const reportId = `rep_${ctx.thread.toolCallId.replace(/[^a-zA-Z0-9]/g, "").slice(-8)}`;
    if (ctx.entry.type === "initial") {
      await ctx.data.write("stage", { label: "Waiting for details" }, { id: "stage" });
      return ctx.suspend("collectDetails", {
        prompt: `Who is the report on "${ctx.input.topic}" for, and how should it read?`,
        topic: ctx.input.topic,
      });
    }
    if (ctx.entry.name === "collectDetails") {
      const details = ctx.entry.resume;
      const outline = Array.from({ length: details.sections }, (_, index) =>
        index === 0 ? `Summary for ${details.audience}` : `Section ${index + 1}: ${ctx.input.topic}`,
      );
      await ctx.data.write("stage", { label: "Draft ready for review" }, { id: "stage" });
      return ctx.suspend("approveDraft", {
        title: `${ctx.input.topic} (${details.tone})`,
        outline,
      });
    }
    if (ctx.entry.name === "approveDraft") {
      if (!ctx.entry.resume.approved) {
        await ctx.data.write("stage", { label: "Rejected" }, { id: "stage" });
        return {
          status: "rejected" as const,
          reportId,
          ...(ctx.entry.resume.comment ? { comment: ctx.entry.resume.comment } : {}),
        };
      }
      await ctx.data.write("stage", { label: "Waiting for a reference" }, { id: "stage" });
      return ctx.suspend("attachReferenceFile", {
        reportId,
        hint: "Link the source document this report is based on.",
      });
    }
    if (ctx.entry.name === "attachReferenceFile") {
      // Earlier answers live in the durable suspension history, not in memory: this entry may
      // run in another process, after a restart.
      const details = detailsFromHistory(ctx.suspendHistory);
      await ctx.data.write("stage", { label: "Published" }, { id: "stage" });
      return {
        status: "published" as const,
        reportId,
        title: ctx.input.topic,
        audience: details.audience,
        sections: details.sections,
        reference: ctx.entry.resume,
      };
    }
    throw new Error("Unsupported tool entry");
  },
});

const submittedDetails = z.object({
  name: z.literal("collectDetails"),
  status: z.literal("submitted"),
  resume: z.object({ audience: z.string(), sections: z.number(), tone: z.string() }),
});

/** The latest submitted `collectDetails` answer (the history is untyped by contract, so parse it). */
function detailsFromHistory(history: unknown[]) {
  for (const item of [...history].reverse()) {
    const parsed = submittedDetails.safeParse(item);
    if (parsed.success) return parsed.data.resume;
  }
  throw new Error("No submitted collectDetails answer in the suspension history.");
}

/** A long task that writes durable progress the UI shows as a progress bar. */
export const deployService = defineTool({
  id: "playground.deploy-service.v1",
  description: "Deploy a service. Takes a few seconds and reports progress.",
  inputSchema: z.object({ service: z.string().describe("Service name") }),
  outputSchema: z.object({ service: z.string(), url: z.string(), steps: z.number() }),
  dataSchemas: {
    progress: z.object({ label: z.string(), pct: z.number().min(0).max(1) }),
  },
  execute: async (ctx) => {
    const steps = ["Resolving dependencies", "Building image", "Running checks", "Rolling out", "Verifying"];
    for (const [index, label] of steps.entries()) {
      // One id: the record is updated in place, so a reload shows the latest value only.
      await ctx.data.write("progress", { label, pct: index / steps.length }, { id: "deploy" });
      await pause(450, ctx.signal);
    }
    await ctx.data.write("progress", { label: "Done", pct: 1 }, { id: "deploy" });
    const slug = ctx.input.service.toLowerCase().replace(/[^a-z0-9]+/g, "-") || "service";
    return { service: ctx.input.service, url: `https://${slug}.playground.test`, steps: steps.length };
  },
});

/** A server-declared client tool: no execute, so the browser (or a person) supplies the output. */
export const getSelectedText = defineTool({
  id: "playground.get-selected-text.v1",
  description: "Read the text the user selected in the conversation. The browser answers.",
  inputSchema: z.object({}),
  outputSchema: z.object({
    text: z
      .string()
      .min(1, "Type or select some text.")
      .meta({ title: "Selected text", description: "The passage the agent should read." }),
  }),
});

const datasets = {
  orders: {
    header: ["order_id", "customer", "total_eur", "status"],
    row: (index: number) => [
      `ORD-${1000 + index}`,
      ["Acme", "Globex", "Initech", "Umbrella"][index % 4],
      ((index * 37) % 500) + 20,
      index % 3 === 0 ? "open" : "paid",
    ],
  },
  signups: {
    header: ["day", "signups", "activated"],
    row: (index: number) => [
      `2025-01-${String(index + 1).padStart(2, "0")}`,
      40 + ((index * 13) % 30),
      20 + index,
    ],
  },
} as const;

/** Saves a generated CSV with `ctx.files` and returns its id, which the UI turns into a download link. */
export const exportCsv = defineTool({
  id: "playground.export-csv.v1",
  description: "Export a demo dataset as a CSV file the user can download.",
  inputSchema: z.object({
    dataset: z.enum(["orders", "signups"]),
    rows: z.number().int().min(1).max(28).default(10),
  }),
  outputSchema: z.object({ fileId: z.string(), filename: z.string(), rows: z.number(), bytes: z.number() }),
  execute: async (ctx) => {
    const dataset = datasets[ctx.input.dataset];
    const lines = [dataset.header.join(",")];
    for (let index = 0; index < ctx.input.rows; index++) lines.push(dataset.row(index).join(","));
    const body = new TextEncoder().encode(`${lines.join("\n")}\n`);
    const filename = `${ctx.input.dataset}.csv`;
    const file = await ctx.files.save({ body, mediaType: "text/csv", filename });
    return { fileId: file.fileId, filename: file.filename, rows: ctx.input.rows, bytes: body.byteLength };
  },
});

/** A tool only admins get (see the agent's `enabled`); everyone else's model never sees it. */
export const adminStats = defineTool({
  id: "playground.admin-stats.v1",
  description: "Show server statistics. Admins only.",
  inputSchema: z.object({}),
  outputSchema: z.object({ uptimeSeconds: z.number(), node: z.string(), heapMb: z.number() }),
  execute: () => ({
    uptimeSeconds: Math.round(process.uptime()),
    node: process.version,
    heapMb: Math.round(process.memoryUsage().heapUsed / 1_048_576),
  }),
});

/** Runs a shell command in this thread's sandbox (`@pai/sandbox`: just-bash, in memory, no host access). */
export const runShell = defineTool({
  id: "playground.run-shell.v1",
  description:
    "Run a bash command in this conversation's sandbox. Files persist between commands of a thread.",
  inputSchema: z.object({ command: z.string().min(1).max(2_000) }),
  outputSchema: z.object({
    command: z.string(),
    stdout: z.string(),
    stderr: z.string(),
    exitCode: z.number(),
    timedOut: z.boolean(),
  }),
  capabilities: { sandbox },
  execute: async (ctx) => {
    const result = await ctx.capabilities.sandbox.runCommand({
      command: ctx.input.command,
      signal: ctx.signal,
    });
    return {
      command: ctx.input.command,
      stdout: result.stdout,
      stderr: result.stderr,
      exitCode: result.exitCode,
      timedOut: result.timedOut,
    };
  },
});

/** A plain lookup the code-mode program can call many times in one step. */
export const orderTotal = defineTool({
  id: "playground.order-total.v1",
  description: "Look up the total (EUR) of one demo order by its number (0-27).",
  inputSchema: z.object({ order: z.number().int().min(0).max(27) }),
  outputSchema: z.object({ orderId: z.string(), customer: z.string(), totalEur: z.number() }),
  execute: ({ input }) => {
    const [orderId, customer, totalEur] = datasets.orders.row(input.order);
    return { orderId: String(orderId), customer: String(customer), totalEur: Number(totalEur) };
  },
});

/** `@pai/code-mode`: the model writes one JavaScript program that calls the tools below. */
export const runCode = codeModeTool({
  id: "playground.code.v1",
  tools: { orderTotal, runShell },
  limits: { timeoutMs: 5_000 },
});
