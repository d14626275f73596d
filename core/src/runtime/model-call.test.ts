import type { LanguageModel, ModelMessage, ToolSet } from "ai";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { scriptedModel } from "../testing/scripted-model.js";
import { type ModelCallPart, modelCallPath, streamModelCall } from "./model-call.js";
import { ProviderPromptCache } from "./provider-prompt.js";

type RawPart = { type: string } & Record<string, unknown>;

/** A model whose stream is exactly `parts`, and which records the prompt and tools it got. */
function rawModel(parts: RawPart[], seen: unknown[] = []): LanguageModel {
  return {
    specificationVersion: "v4",
    provider: "raw.chat",
    modelId: "raw",
    supportedUrls: {},
    doGenerate: () => Promise.reject(new Error("not used")),
    doStream: async (options: unknown) => {
      seen.push(options);
      return {
        stream: new ReadableStream({
          start(controller) {
            for (const part of parts) controller.enqueue(part);
            controller.close();
          },
        }),
      };
    },
  } as unknown as LanguageModel;
}

const tools: ToolSet = {
  lookup: { description: "Look a word up.", inputSchema: z.object({ word: z.string() }) } as ToolSet[string],
};
const messages: ModelMessage[] = [
  { role: "user", content: "define churn" },
  {
    role: "assistant",
    content: [{ type: "tool-call", toolCallId: "c0", toolName: "lookup", input: { word: "x" } }],
  },
  {
    role: "tool",
    content: [
      { type: "tool-result", toolCallId: "c0", toolName: "lookup", output: { type: "json", value: 1 } },
    ],
  },
];
const finish = {
  type: "finish",
  usage: {
    inputTokens: { total: 1, noCache: 1, cacheRead: 0, cacheWrite: 0 },
    outputTokens: { total: 1, text: 1, reasoning: 0 },
  },
  finishReason: { unified: "stop", raw: undefined },
};

/**
 * What a step takes from a stream, in order. An invalid tool call is followed by a tool-error
 * part whose text replaces the call's error, as a step folds them.
 */
async function collect(stream: AsyncIterable<ModelCallPart>) {
  const out: Array<Record<string, unknown>> = [];
  for await (const part of stream) {
    switch (part.type) {
      case "text-delta":
      case "reasoning-delta":
        out.push({ type: part.type, id: part.id, text: part.text });
        break;
      case "tool-call":
        out.push({
          type: "tool-call",
          toolCallId: part.toolCallId,
          toolName: part.toolName,
          input: part.input,
          ...(part.invalid ? { error: messageOf(part.error) } : {}),
        });
        break;
      case "tool-error": {
        const call = out.find((entry) => entry.toolCallId === part.toolCallId);
        if (call) call.error = messageOf(part.error);
        else out.push({ type: "tool-error", toolCallId: part.toolCallId, error: messageOf(part.error) });
        break;
      }
      case "error":
        out.push({ type: "error", error: messageOf(part.error) });
        break;
      default:
        break;
    }
  }
  return out;
}

const messageOf = (error: unknown) => (error instanceof Error ? error.message : String(error));

async function bothPaths(makeModel: () => LanguageModel, request: { instructions?: string } = {}) {
  const call = (via: "direct" | "sdk") =>
    streamModelCall({ model: makeModel(), messages, tools, ...request }, { via }).then(collect);
  return { direct: await call("direct"), sdk: await call("sdk") };
}

describe("streamModelCall", () => {
  it("takes the direct path with the ai version the package is built and tested with", () => {
    expect(modelCallPath).toBe("direct");
  });

  it("yields what the SDK's primitive yields: text and reasoning deltas, tool calls", async () => {
    const { direct, sdk } = await bothPaths(() =>
      scriptedModel([
        {
          reasoning: "thinking",
          text: ["Hel", "lo"],
          toolCalls: [{ toolName: "lookup", input: { word: "churn" } }],
        },
      ]),
    );
    expect(direct).toEqual(sdk);
    expect(direct.map((part) => part.type)).toEqual([
      "reasoning-delta",
      "text-delta",
      "text-delta",
      "tool-call",
    ]);
    expect(direct[3]).toMatchObject({ toolName: "lookup", input: { word: "churn" } });
  });

  it("marks invalid tool calls (bad input, unknown tool, broken JSON) with the SDK's own error", async () => {
    const { direct, sdk } = await bothPaths(() =>
      rawModel([
        { type: "stream-start", warnings: [] },
        { type: "tool-call", toolCallId: "a", toolName: "lookup", input: JSON.stringify({ word: 3 }) },
        { type: "tool-call", toolCallId: "b", toolName: "missing", input: "{}" },
        { type: "tool-call", toolCallId: "c", toolName: "lookup", input: "{not json" },
        finish,
      ]),
    );
    expect(direct).toEqual(sdk);
    expect(direct).toHaveLength(3);
    for (const part of direct) expect(part.error).toMatch(/^AI_\w+Error: /);
    expect(direct[0]?.input).toEqual({ word: 3 });
  });

  it("reports stream errors; a plain error object by its message", async () => {
    for (const error of [new Error("rate limited"), { error: { message: "overloaded", type: "server" } }]) {
      const { direct, sdk } = await bothPaths(() =>
        rawModel([
          { type: "stream-start", warnings: [] },
          { type: "text-delta", id: "t", delta: "partial" },
          { type: "error", error },
        ]),
      );
      expect(direct).toEqual(sdk);
      expect(direct.at(-1)?.error).toBe(error instanceof Error ? "rate limited" : "overloaded");
    }
  });

  it("sends the provider the prompt and tools the SDK's primitive sends", async () => {
    const seen: Record<"direct" | "sdk", unknown[]> = { direct: [], sdk: [] };
    for (const via of ["direct", "sdk"] as const) {
      const stream = await streamModelCall(
        {
          model: rawModel([{ type: "stream-start", warnings: [] }, finish], seen[via]),
          instructions: "Be brief.",
          messages,
          tools,
        },
        { via },
      );
      await collect(stream);
    }
    const pick = (options: unknown) => {
      const { prompt, tools: sent, toolChoice } = options as Record<string, unknown>;
      return { prompt, tools: sent, toolChoice };
    };
    expect(pick(seen.direct[0])).toEqual(pick(seen.sdk[0]));
    expect((pick(seen.direct[0]).prompt as unknown[])[0]).toMatchObject({
      role: "system",
      content: "Be brief.",
    });
  });

  it("sends the same prompt with a thread's kept provider prompt, call after call", async () => {
    const cache = new ProviderPromptCache();
    const kept: unknown[] = [];
    // One model object for every call: the kept prompt belongs to the model it was made for.
    const model = rawModel([{ type: "stream-start", warnings: [] }, finish], kept);
    const prompt = (options: unknown) => (options as { prompt: unknown }).prompt;
    let history = messages;
    for (const next of [
      [{ role: "assistant", content: "churn is turnover" }],
      [{ role: "user", content: "and retention?" }],
      [{ role: "assistant", content: "its opposite" }],
    ] as ModelMessage[][]) {
      history = [...history, ...next];
      const request = { instructions: "Be brief.", messages: history, tools };
      await collect(await streamModelCall({ ...request, model, promptCache: cache }));
      const sdk: unknown[] = [];
      const fresh = rawModel([{ type: "stream-start", warnings: [] }, finish], sdk);
      await collect(await streamModelCall({ ...request, model: fresh }, { via: "sdk" }));
      expect(prompt(kept.at(-1))).toEqual(prompt(sdk[0]));
    }
    expect(kept).toHaveLength(3);
  });

  it("fails the call as the primitive does when the provider refuses it", async () => {
    const refusing = () =>
      ({
        ...(rawModel([]) as object),
        doStream: () => Promise.reject(new Error("401 unauthorized")),
      }) as unknown as LanguageModel;
    for (const via of ["direct", "sdk"] as const) {
      await expect(streamModelCall({ model: refusing(), messages, tools }, { via })).rejects.toThrow(
        "401 unauthorized",
      );
    }
  });

  it("cancels the provider's stream when the reader stops early", async () => {
    let cancelled = false;
    const model = {
      ...(rawModel([]) as object),
      doStream: async () => ({
        stream: new ReadableStream({
          start(controller) {
            controller.enqueue({ type: "text-delta", id: "t", delta: "a" });
          },
          cancel() {
            cancelled = true;
          },
        }),
      }),
    } as unknown as LanguageModel;
    const stream = await streamModelCall({ model, messages, tools });
    for await (const part of stream) {
      expect(part.type).toBe("text-delta");
      break;
    }
    expect(cancelled).toBe(true);
  });
});
