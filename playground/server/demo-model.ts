import type {
  LanguageModelV4,
  LanguageModelV4CallOptions,
  LanguageModelV4Prompt,
  LanguageModelV4StreamPart,
} from "@ai-sdk/provider";

/**
 * A deterministic stand-in for a language model, so the playground works with no API key.
 * It reads the last user message, recognizes a few intents, and calls the matching demo tool
 * (only if that tool is offered in this step: a disabled tool or a frontend tool the browser
 * did not advertise is not called). After tool results it answers with a short summary. Text
 * is streamed in small chunks with small delays so the UI shows live streaming.
 */

type Reply = { text: string; toolCall?: { toolName: string; input: unknown } };

type Intent = {
  /** Matched against the lower-cased last user message. */
  pattern: RegExp;
  toolName: string;
  lead: string;
  /** Builds the tool input from the lower-cased message and the message as typed. */
  input: (message: string, original: string) => unknown;
  /** Said instead when the tool is not offered in this step. */
  unavailable: string;
};

const after = (message: string, words: RegExp, fallback: string) => {
  const match = words.exec(message);
  const rest = match ? message.slice(match.index + match[0].length) : "";
  const cleaned = rest
    .replace(/^[\s:,-]*(?:(?:about|the|an|a|on|for)\b)?\s*/i, "")
    .replace(/[.!?]+$/, "")
    .trim();
  return cleaned.length > 0 ? cleaned.slice(0, 80) : fallback;
};

const PROGRAM = (orders: number) =>
  [
    "const totals = [];",
    `for (let order = 0; order < ${orders}; order++) {`,
    "  const { orderId, totalEur } = await tools.orderTotal({ order });",
    "  totals.push(totalEur);",
    '  console.log(orderId + ": " + totalEur + " EUR");',
    "}",
    'await tools.runShell({ command: "echo " + totals.join(",") + " > totals.txt" });',
    "return { orders: totals.length, sumEur: totals.reduce((sum, total) => sum + total, 0) };",
  ].join("\n");

const INTENTS: Intent[] = [
  {
    pattern: /^\s*(?:run|shell|bash)\b|^\s*\$/,
    toolName: "runShell",
    lead: "Running that in this thread's sandbox.",
    input: (_message, original) => ({
      command:
        original.replace(/^\s*(?:run|shell|bash|\$)\s*:?\s*/i, "").trim() ||
        "echo hello from the sandbox > hello.txt && cat hello.txt && ls",
    }),
    unavailable: "runShell is not available right now.",
  },
  {
    pattern: /\badmin\b|\bstats\b/,
    toolName: "adminStats",
    lead: "Fetching server statistics.",
    input: () => ({}),
    unavailable:
      "adminStats is disabled for you: the agent enables it only for the admin user. Switch the user to admin (top right) and ask again.",
  },
  {
    pattern: /\bapprov/,
    toolName: "requestApproval",
    lead: "I need your approval first.",
    input: (message) => ({ summary: `Approve: ${after(message, /\bapprov\w*/i, "the pending change")}` }),
    unavailable: "requestApproval is not available right now.",
  },
  {
    pattern: /\breport\b/,
    toolName: "draftReport",
    lead: "Let's draft that report together.",
    input: (message) => ({ topic: after(message, /\breport\b/i, "Quarterly update") }),
    unavailable: "draftReport is not available right now.",
  },
  {
    pattern: /\bdeploy|\bprogress\b/,
    toolName: "deployService",
    lead: "Starting the deployment; watch the progress bar.",
    input: (message) => ({ service: after(message, /\bdeploy\w*|\bprogress\b/i, "web-api") }),
    unavailable: "deployService is not available right now.",
  },
  {
    pattern: /\bselect/,
    toolName: "getSelectedText",
    lead: "Reading your selection in the browser.",
    input: () => ({}),
    unavailable: "getSelectedText is not available right now.",
  },
  {
    pattern: /\bbrowser\b|\btime ?zone\b|\bwhat time\b/,
    toolName: "getBrowserInfo",
    lead: "Asking your browser.",
    input: () => ({}),
    unavailable:
      "getBrowserInfo is a frontend-defined tool and this request did not advertise it. Send the message from the playground UI.",
  },
  {
    pattern: /\bcsv\b|\bexport\b|\bspreadsheet\b/,
    toolName: "exportCsv",
    lead: "Exporting a CSV file.",
    input: (message) => ({
      dataset: /signup/.test(message) ? "signups" : "orders",
      rows: Math.min(28, Math.max(1, Number(/\b(\d{1,2})\b/.exec(message)?.[1] ?? 12))),
    }),
    unavailable: "exportCsv is not available right now.",
  },
  {
    pattern: /\bcode\b|\bprogram\b|\btotals?\b|\bsum\b/,
    toolName: "runCode",
    lead: "Writing a small program that calls orderTotal in a loop.",
    input: (message) => ({
      code: PROGRAM(Math.min(28, Math.max(1, Number(/\b(\d{1,2})\b/.exec(message)?.[1] ?? 5)))),
    }),
    unavailable: "runCode is not available right now.",
  },
];

const HELP = [
  "Hi! I am the playground's demo model: deterministic, no API key. Try one of these:",
  '"approve the launch" (approval), "write a report about churn" (three-step form),',
  '"deploy billing" (progress bar), "what did I select?" (browser answers),',
  '"what is my browser time zone?" (frontend tool), "export orders as csv" (download),',
  '"run ls -la" (sandbox shell), "sum the totals of 5 orders with code" (code mode),',
  'or "admin stats" (enabled only for the admin user).',
].join(" ");

function textOf(content: unknown): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content
    .map((part: { type?: string; text?: string }) => (part.type === "text" ? (part.text ?? "") : ""))
    .join("");
}

type ToolResultPart = { toolName: string; output: { type: string; value?: unknown } };

function describe(value: unknown): Record<string, unknown> {
  return typeof value === "object" && value !== null ? (value as Record<string, unknown>) : {};
}

/** A short, deterministic summary of one tool result. */
export function summarizeResult(result: ToolResultPart): string {
  const { toolName, output } = result;
  if (output.type === "error-text" || output.type === "error-json") {
    const reason = typeof output.value === "string" ? output.value : JSON.stringify(output.value);
    return `${toolName} did not finish: ${reason}`;
  }
  if (output.type === "execution-denied") return `${toolName} was denied.`;
  const value = describe(output.value);
  switch (toolName) {
    case "requestApproval":
      return value.approved
        ? `Approved${value.comment ? ` ("${value.comment}")` : ""}. Going ahead.`
        : `Not approved${value.comment ? ` ("${value.comment}")` : ""}. I will leave it.`;
    case "draftReport":
      return value.status === "published"
        ? `Report ${value.reportId} published for ${value.audience} with ${value.sections} sections, referencing "${describe(value.reference).title}".`
        : `The draft was rejected${value.comment ? `: ${value.comment}` : ""}.`;
    case "deployService":
      return `Deployed ${value.service} in ${value.steps} steps. It is live at ${value.url}.`;
    case "getSelectedText":
      return `You selected: "${value.text}".`;
    case "getBrowserInfo":
      return `Your browser says: language ${value.language}, time zone ${value.timeZone}, local time ${value.localTime}.`;
    case "exportCsv":
      return `Saved ${value.filename} (${value.rows} rows, ${value.bytes} bytes). Use the download link above.`;
    case "runShell": {
      const shown = String(value.stdout ?? "").trim() || String(value.stderr ?? "").trim() || "(no output)";
      return `Exit code ${value.exitCode}: ${shown.slice(0, 200)}`;
    }
    case "runCode":
      return `The program returned ${JSON.stringify(value.result)} after ${(value.logs as unknown[] | undefined)?.length ?? 0} log lines.`;
    case "adminStats":
      return `Server up ${value.uptimeSeconds}s on Node ${value.node}, heap ${value.heapMb} MB.`;
    default:
      return `${toolName} finished: ${JSON.stringify(output.value ?? null)}`;
  }
}

/** What the demo model answers for a prompt, given the tool names offered in this step. */
export function demoReply(prompt: LanguageModelV4Prompt, offered: ReadonlySet<string>): Reply {
  const last = prompt.at(-1);
  if (last?.role === "tool") {
    const results = (last.content as unknown[]).filter(
      (part): part is ToolResultPart => (part as { type?: string }).type === "tool-result",
    );
    return { text: results.map(summarizeResult).join(" ") || "Done." };
  }
  const lastUser = [...prompt].reverse().find((message) => message.role === "user");
  const original = textOf(lastUser?.content);
  const message = original.toLowerCase();
  for (const intent of INTENTS) {
    if (!intent.pattern.test(message)) continue;
    if (!offered.has(intent.toolName)) return { text: intent.unavailable };
    return {
      text: intent.lead,
      toolCall: { toolName: intent.toolName, input: intent.input(message, original) },
    };
  }
  return { text: HELP };
}

/** Splits text into word-sized chunks that keep their spaces. */
function chunks(text: string): string[] {
  return text.match(/\S+\s*|\s+/g) ?? [];
}

const USAGE = {
  inputTokens: { total: 0, noCache: 0, cacheRead: 0, cacheWrite: 0 },
  outputTokens: { total: 0, text: 0, reasoning: 0 },
};

export type DemoModelOptions = {
  /** Delay between streamed chunks, in ms. Default 18. */
  chunkDelayMs?: number;
};

/** Creates the demo model (a `LanguageModelV4`). */
export function demoModel(options: DemoModelOptions = {}): LanguageModelV4 {
  const delay = options.chunkDelayMs ?? 18;
  let calls = 0;
  const plan = (call: LanguageModelV4CallOptions) => {
    const offered = new Set((call.tools ?? []).map((tool) => tool.name));
    const reply = demoReply(call.prompt, offered);
    calls += 1;
    const parts: LanguageModelV4StreamPart[] = [{ type: "stream-start", warnings: [] }];
    const id = `text-${calls}`;
    parts.push({ type: "text-start", id });
    for (const delta of chunks(reply.text)) parts.push({ type: "text-delta", id, delta });
    parts.push({ type: "text-end", id });
    if (reply.toolCall) {
      parts.push({
        type: "tool-call",
        toolCallId: `demo-${Date.now().toString(36)}-${calls}`,
        toolName: reply.toolCall.toolName,
        input: JSON.stringify(reply.toolCall.input),
      });
    }
    parts.push({
      type: "finish",
      usage: USAGE,
      finishReason: { unified: reply.toolCall ? "tool-calls" : "stop", raw: undefined },
    });
    return { reply, parts };
  };

  return {
    specificationVersion: "v4",
    provider: "pai-playground",
    modelId: "demo",
    supportedUrls: {},
    async doGenerate(call) {
      const { reply, parts } = plan(call);
      const toolCall = parts.find((part) => part.type === "tool-call");
      return {
        content: [{ type: "text", text: reply.text }, ...(toolCall ? [toolCall] : [])],
        finishReason: { unified: reply.toolCall ? "tool-calls" : "stop", raw: undefined },
        usage: USAGE,
        warnings: [],
      } as Awaited<ReturnType<LanguageModelV4["doGenerate"]>>;
    },
    async doStream(call) {
      const { parts } = plan(call);
      const signal = call.abortSignal;
      let index = 0;
      return {
        stream: new ReadableStream<LanguageModelV4StreamPart>({
          async pull(controller) {
            if (signal?.aborted) {
              controller.error(signal.reason);
              return;
            }
            const part = parts[index++];
            if (!part) {
              controller.close();
              return;
            }
            if (part.type === "text-delta") await new Promise((resolve) => setTimeout(resolve, delay));
            controller.enqueue(part);
          },
        }),
      };
    },
  };
}
