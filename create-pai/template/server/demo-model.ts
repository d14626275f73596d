import { type ScriptedModel, type ScriptedStep, scriptedModel } from "@pai/core/testing";

/** What the model is called with: the prompt so far and the tools offered. */
type Call = Parameters<ScriptedModel["doStream"]>[0];

function userText(call: Call): string {
  const user = call.prompt.findLast((message) => message.role === "user");
  if (!user) return "";
  return user.content.map((part) => (part.type === "text" ? part.text : "")).join(" ");
}

/** What the model says after tool results: one sentence per result. */
function afterTools(call: Call): ScriptedStep {
  const last = call.prompt.at(-1);
  const sentences: string[] = [];
  for (const part of last?.role === "tool" ? last.content : []) {
    if (part.type !== "tool-result") continue;
    const value = part.output.type === "json" ? (part.output.value as Record<string, unknown> | null) : null;
    if (part.toolName === "requestApproval") {
      sentences.push(value?.approved ? "Approved, so I went ahead." : "Not approved, so I left it.");
    } else if (part.toolName === "getLocalTime" && value) {
      sentences.push(`Your browser says it is ${value.time} (${value.timeZone}).`);
    } else {
      sentences.push(`${part.toolName} did not finish.`);
    }
  }
  return { text: sentences.join(" ") || "Done." };
}

/**
 * A deterministic stand-in for a language model, so the app runs without an API key: a question
 * about the time calls the browser's getLocalTime tool, anything else asks for approval first.
 * Built with `scriptedModel` from `@pai/core/testing`, the same tool the tests use.
 */
export function demoModel(): ScriptedModel {
  return scriptedModel(
    (call) => {
      if (call.prompt.at(-1)?.role === "tool") return afterTools(call);
      const text = userText(call).trim();
      const offered = new Set((call.tools ?? []).map((tool) => tool.name));
      if (/\b(time|clock)\b/i.test(text) && offered.has("getLocalTime")) {
        return { text: "Let me ask your browser.", toolCalls: [{ toolName: "getLocalTime", input: {} }] };
      }
      return {
        text: "I need your approval first.",
        toolCalls: [{ toolName: "requestApproval", input: { summary: text.slice(0, 200) || "Say hello" } }],
      };
    },
    { modelId: "demo", recordCalls: false },
  );
}
