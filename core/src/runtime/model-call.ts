import {
  type Experimental_DownloadFunction as DownloadFunction,
  type LanguageModel,
  type ModelMessage,
  experimental_streamLanguageModelCall as sdkStreamLanguageModelCall,
  type ToolSet,
} from "ai";
import * as sdkInternal from "ai/internal";
import type { ConvertPrompt, ProviderPromptCache } from "./provider-prompt.js";

/**
 * The parts of one model call's stream that a step reads. The direct path yields only these;
 * the public primitive also yields parts a step ignores (`other` stands for them).
 */
export type ModelCallPart =
  | { type: "text-delta" | "reasoning-delta"; id: string; text: string }
  | {
      type: "tool-call";
      toolCallId: string;
      toolName: string;
      input: unknown;
      invalid?: boolean;
      error?: unknown;
      providerExecuted?: boolean;
    }
  | { type: "tool-error"; toolCallId: string; toolName: string; input: unknown; error: unknown }
  | { type: "error"; error: unknown }
  | { type: "other" };

export type ModelCallRequest = {
  model: LanguageModel;
  instructions?: string | undefined;
  messages: ModelMessage[];
  tools: ToolSet;
  abortSignal?: AbortSignal | undefined;
  /** The thread's provider prompt from its last step: only the user turns that changed are converted. */
  promptCache?: ProviderPromptCache | undefined;
  /**
   * Fetches file URLs of the prompt (the runtime's `download` option). Default
   * `passUrlsThrough`: this process fetches nothing.
   */
  download?: DownloadFunction | undefined;
};

/**
 * The default download function: every URL of the prompt goes to the provider as it is (the
 * SDK reads `null` as "pass the URL through"), so this process never fetches a URL a user
 * wrote. The SDK's own default downloads every URL the model does not support.
 */
export const passUrlsThrough: DownloadFunction = async (requests) => requests.map(() => null);

type ResolvedModel = {
  provider: string;
  supportedUrls: unknown;
  doStream(options: Record<string, unknown>): PromiseLike<{ stream: ReadableStream<ProviderPart> }>;
};
type ProviderPart = { type: string } & Record<string, unknown>;
type Standardized = { instructions?: unknown; messages: ModelMessage[] };

/** The SDK building blocks the direct path calls, as narrow signatures. */
type Blocks = {
  resolveLanguageModel(model: LanguageModel): ResolvedModel;
  standardizePrompt(prompt: { instructions?: string; messages: ModelMessage[] }): Promise<Standardized>;
  convertToLanguageModelPrompt: ConvertPrompt;
  prepareTools(options: { tools: ToolSet }): Promise<unknown>;
  prepareToolChoice(options: { toolChoice: undefined }): unknown;
  parseToolCall(options: {
    toolCall: ProviderPart;
    tools: ToolSet;
    messages: ModelMessage[];
    instructions?: unknown;
    abortSignal?: AbortSignal;
  }): Promise<Extract<ModelCallPart, { type: "tool-call" }>>;
};

const BLOCK_NAMES = [
  "resolveLanguageModel",
  "standardizePrompt",
  "convertToLanguageModelPrompt",
  "prepareTools",
  "prepareToolChoice",
  "parseToolCall",
] as const;

/**
 * The same blocks the SDK's `experimental_streamLanguageModelCall` is made of, when this `ai`
 * exports them all from `ai/internal`; otherwise null, and every call takes the public path.
 */
const blocks: Blocks | null = BLOCK_NAMES.every(
  (name) => typeof (sdkInternal as Record<string, unknown>)[name] === "function",
)
  ? (sdkInternal as unknown as Blocks)
  : null;

/** Which path `streamModelCall` takes: `direct` unless this `ai` lacks its building blocks. */
export const modelCallPath: "direct" | "sdk" = blocks ? "direct" : "sdk";

/**
 * Streams one model call and yields the parts a step collects: text and reasoning deltas,
 * parsed tool calls (an invalid one carries its error) and stream errors.
 *
 * The direct path (decisions §22) does what the SDK's single-call primitive does with the same
 * SDK functions (prompt standardization and conversion, tool preparation, tool-call parsing),
 * then reads the provider's stream itself: the primitive's transform stream and async-iterable
 * wrapper cost about ten times the rest of the call on a fast model. `via: "sdk"` forces the
 * public primitive (the parity tests compare both).
 */
export async function streamModelCall(
  request: ModelCallRequest,
  options: { via?: "direct" | "sdk" } = {},
): Promise<AsyncIterable<ModelCallPart>> {
  const download = request.download ?? passUrlsThrough;
  if (!blocks || options.via === "sdk") {
    const result = await sdkStreamLanguageModelCall({
      model: request.model,
      ...(request.instructions ? { instructions: request.instructions } : {}),
      messages: request.messages,
      tools: request.tools,
      download,
      abortSignal: request.abortSignal,
    });
    return result.stream as AsyncIterable<ModelCallPart>;
  }
  const { abortSignal, tools } = request;
  const model = blocks.resolveLanguageModel(request.model);
  const standardized = await blocks.standardizePrompt({
    ...(request.instructions ? { instructions: request.instructions } : {}),
    messages: request.messages,
  });
  const supportedUrls = await model.supportedUrls;
  const provider = model.provider.split(".")[0] ?? model.provider;
  const prompt = request.promptCache
    ? await request.promptCache.convert(blocks.convertToLanguageModelPrompt, {
        model: request.model,
        instructions: standardized.instructions,
        messages: standardized.messages,
        supportedUrls,
        download,
        ...(abortSignal ? { abortSignal } : {}),
        provider,
      })
    : await blocks.convertToLanguageModelPrompt({
        prompt: { instructions: standardized.instructions, messages: standardized.messages },
        supportedUrls,
        download,
        ...(abortSignal ? { abortSignal } : {}),
        provider,
      });
  const { stream } = await model.doStream({
    tools: await blocks.prepareTools({ tools }),
    toolChoice: blocks.prepareToolChoice({ toolChoice: undefined }),
    prompt,
    abortSignal,
  });
  return readParts(blocks, stream, { tools, standardized, abortSignal });
}

async function* readParts(
  sdk: Blocks,
  stream: ReadableStream<ProviderPart>,
  call: { tools: ToolSet; standardized: Standardized; abortSignal: AbortSignal | undefined },
): AsyncGenerator<ModelCallPart> {
  const reader = stream.getReader();
  let done = false;
  try {
    for (;;) {
      const next = await reader.read();
      if (next.done) {
        done = true;
        return;
      }
      const part = next.value;
      switch (part.type) {
        case "text-delta":
        case "reasoning-delta":
          yield { type: part.type, id: part.id as string, text: part.delta as string };
          break;
        case "tool-call": {
          let parsed: Extract<ModelCallPart, { type: "tool-call" }>;
          try {
            parsed = await sdk.parseToolCall({
              toolCall: part,
              tools: call.tools,
              messages: call.standardized.messages,
              instructions: call.standardized.instructions,
              ...(call.abortSignal ? { abortSignal: call.abortSignal } : {}),
            });
          } catch (error) {
            yield { type: "error", error };
            break;
          }
          yield parsed;
          // As the SDK's primitive does: an invalid call is followed by its error, as text.
          if (parsed.invalid && !parsed.providerExecuted) {
            yield {
              type: "tool-error",
              toolCallId: parsed.toolCallId,
              toolName: parsed.toolName,
              input: parsed.input,
              error: errorText(parsed.error),
            };
          }
          break;
        }
        case "error":
          yield { type: "error", error: providerError(part.error) };
          break;
        default:
          break;
      }
    }
  } finally {
    // A consumer that stops early (or a throw) must not leave the provider's response open.
    if (!done) await reader.cancel().catch(() => undefined);
  }
}

/** An error as the SDK's stream words it in a tool-error part (its name, then its message). */
function errorText(error: unknown): string {
  if (error == null) return "unknown error";
  if (typeof error === "string") return error;
  if (error instanceof Error) return error.toString();
  return JSON.stringify(error);
}

/**
 * A provider's error part is often a plain object (a parsed error body). Its message is what
 * a person needs, as the SDK's own stream reports it; an Error passes through.
 */
function providerError(error: unknown): unknown {
  if (error instanceof Error || typeof error !== "object" || error === null) return error;
  const record = error as { message?: unknown; error?: { message?: unknown } };
  const message =
    typeof record.message === "string"
      ? record.message
      : typeof record.error?.message === "string"
        ? record.error.message
        : undefined;
  return message === undefined ? error : new Error(message, { cause: error });
}
