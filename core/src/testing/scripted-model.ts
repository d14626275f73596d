import type { LanguageModel } from "ai";

// The provider-spec types come through `ai` itself, so a host never needs a second
// `@ai-sdk/provider` that could differ from the one its `ai` pins.
type LanguageModelV4 = Extract<LanguageModel, { specificationVersion: "v4" }>;
type LanguageModelV4CallOptions = Parameters<LanguageModelV4["doStream"]>[0];
type LanguageModelV4StreamPart =
  Awaited<ReturnType<LanguageModelV4["doStream"]>>["stream"] extends ReadableStream<infer TPart>
    ? TPart
    : never;

/** One scripted model response: text (optionally in chunks), reasoning, tool calls, or an error. */
export type ScriptedStep = {
  text?: string | string[];
  reasoning?: string;
  toolCalls?: Array<{ toolName: string; input: unknown; toolCallId?: string }>;
  /** Makes the model call fail with this error instead of answering. */
  error?: string | Error;
};

export type ScriptedModel = LanguageModelV4 & {
  /** Every call's options (prompt, tools) in order, for assertions. */
  readonly calls: LanguageModelV4CallOptions[];
  /** Steps not consumed yet. */
  readonly remaining: number;
};

/**
 * A deterministic language model for tests: each call answers with the next scripted step
 * (or with what a function returns for the call). Running out of steps is an error, so a
 * test never silently gets an empty answer.
 */
export function scriptedModel(
  script: ScriptedStep[] | ((call: LanguageModelV4CallOptions, index: number) => ScriptedStep),
  options: {
    modelId?: string /** Keep every call's options in `calls` (default true; long benchmarks turn it off). */;
    recordCalls?: boolean;
  } = {},
): ScriptedModel {
  const calls: LanguageModelV4CallOptions[] = [];
  const steps = Array.isArray(script) ? [...script] : null;
  let callIndex = 0;
  let toolCallCounter = 0;

  const next = (call: LanguageModelV4CallOptions): ScriptedStep => {
    const index = callIndex++;
    if (!steps)
      return (script as (call: LanguageModelV4CallOptions, index: number) => ScriptedStep)(call, index);
    const step = steps.shift();
    if (!step) {
      throw new Error(
        `scriptedModel: no step left for model call #${index + 1}. Add another step to the script.`,
      );
    }
    return step;
  };

  const toParts = (step: ScriptedStep): LanguageModelV4StreamPart[] => {
    if (step.error !== undefined) {
      return [
        { type: "stream-start", warnings: [] },
        { type: "error", error: typeof step.error === "string" ? new Error(step.error) : step.error },
      ];
    }
    const parts: LanguageModelV4StreamPart[] = [{ type: "stream-start", warnings: [] }];
    if (step.reasoning) {
      parts.push({ type: "reasoning-start", id: "r0" });
      parts.push({ type: "reasoning-delta", id: "r0", delta: step.reasoning });
      parts.push({ type: "reasoning-end", id: "r0" });
    }
    const chunks = step.text === undefined ? [] : Array.isArray(step.text) ? step.text : [step.text];
    if (chunks.length > 0) {
      parts.push({ type: "text-start", id: "t0" });
      for (const chunk of chunks) parts.push({ type: "text-delta", id: "t0", delta: chunk });
      parts.push({ type: "text-end", id: "t0" });
    }
    for (const call of step.toolCalls ?? []) {
      parts.push({
        type: "tool-call",
        toolCallId: call.toolCallId ?? `call-${++toolCallCounter}`,
        toolName: call.toolName,
        input: JSON.stringify(call.input ?? {}),
      });
    }
    const usage = {
      inputTokens: { total: 1, noCache: 1, cacheRead: 0, cacheWrite: 0 },
      outputTokens: { total: 1, text: 1, reasoning: 0 },
    };
    parts.push({
      type: "finish",
      usage,
      finishReason: { unified: step.toolCalls?.length ? "tool-calls" : "stop", raw: undefined },
    });
    return parts;
  };

  const model = {
    specificationVersion: "v4" as const,
    provider: "pai-scripted",
    modelId: options.modelId ?? "scripted",
    supportedUrls: {},
    calls,
    get remaining() {
      return steps ? steps.length : Number.POSITIVE_INFINITY;
    },
    async doGenerate(call: LanguageModelV4CallOptions) {
      if (options.recordCalls !== false) calls.push(call);
      const parts = toParts(next(call));
      const failure = parts.find((part) => part.type === "error");
      if (failure) throw (failure as { error: unknown }).error;
      const content: unknown[] = [];
      for (const part of parts) {
        if (part.type === "text-delta") {
          const last = content.at(-1) as { type: string; text: string } | undefined;
          if (last?.type === "text") last.text += part.delta;
          else content.push({ type: "text", text: part.delta });
        } else if (part.type === "reasoning-delta") content.push({ type: "reasoning", text: part.delta });
        else if (part.type === "tool-call") content.push(part);
      }
      const finish = parts.find((part) => part.type === "finish") as Extract<
        LanguageModelV4StreamPart,
        { type: "finish" }
      >;
      return { content, finishReason: finish.finishReason, usage: finish.usage, warnings: [] } as never;
    },
    async doStream(call: LanguageModelV4CallOptions) {
      if (options.recordCalls !== false) calls.push(call);
      const parts = toParts(next(call));
      return {
        stream: new ReadableStream<LanguageModelV4StreamPart>({
          start(controller) {
            for (const part of parts) controller.enqueue(part);
            controller.close();
          },
        }),
      };
    },
  };
  return model as unknown as ScriptedModel;
}
