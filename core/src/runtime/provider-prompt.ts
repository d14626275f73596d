import type { Experimental_DownloadFunction as DownloadFunction, ModelMessage } from "ai";

/**
 * The SDK's conversion of model messages to the provider's prompt (`convertToLanguageModelPrompt`
 * from `ai/internal`), as the direct model-call path calls it.
 */
export type ConvertPrompt = (options: {
  prompt: { instructions?: unknown; messages: ModelMessage[] };
  supportedUrls: unknown;
  /** Decides, per file URL, to fetch it here or pass it to the provider (`null`). */
  download: DownloadFunction;
  abortSignal?: AbortSignal;
  provider: string;
}) => Promise<unknown>;

/** One user turn of a history and its provider prompt. */
type Segment = { messages: readonly ModelMessage[]; prompt: readonly unknown[] };

/**
 * A thread's provider prompt, kept between its model steps, one segment per user turn. The SDK
 * converts every message of the history on every call: on a 1,000-message thread that was
 * about 0.3 ms a step here (the same work the bare `generateText` loop does). A segment whose
 * messages are the same objects as last time keeps its prompt; only the turn that changed is
 * converted again.
 *
 * Cutting before each user message gives the SDK's own result: it converts each message on its
 * own, and the two things it does across messages stop at a user message. Consecutive tool
 * messages are merged into one (a user message is not a tool message), and every tool call must
 * have its result before the next user message, so a history the SDK refuses is refused here
 * too, by the segment that holds the unanswered call. `provider-prompt.test.ts` holds the two to
 * the same output on generated histories.
 */
export class ProviderPromptCache {
  #model: unknown;
  #supportedUrls: unknown;
  #download: DownloadFunction | undefined;
  #segments: Segment[] = [];
  /** The instructions of the last call and their system messages (the same text on every step). */
  #system: { instructions: unknown; prompt: readonly unknown[] } | undefined;

  async convert(
    convert: ConvertPrompt,
    input: {
      model: unknown;
      instructions: unknown;
      messages: readonly ModelMessage[];
      supportedUrls: unknown;
      download: DownloadFunction;
      abortSignal?: AbortSignal;
      provider: string;
    },
  ): Promise<unknown[]> {
    // Another model, provider URL support or download function converts files differently.
    if (
      input.model !== this.#model ||
      input.download !== this.#download ||
      !sameSupportedUrls(input.supportedUrls, this.#supportedUrls)
    ) {
      this.#model = input.model;
      this.#supportedUrls = input.supportedUrls;
      this.#download = input.download;
      this.#segments = [];
      this.#system = undefined;
    }
    const call = (messages: ModelMessage[], instructions?: unknown) =>
      convert({
        prompt: instructions === undefined ? { messages } : { instructions, messages },
        supportedUrls: input.supportedUrls,
        download: input.download,
        ...(input.abortSignal ? { abortSignal: input.abortSignal } : {}),
        provider: input.provider,
      }) as Promise<unknown[]>;
    if (input.instructions != null && this.#system?.instructions !== input.instructions)
      this.#system = { instructions: input.instructions, prompt: await call([], input.instructions) };
    const out: unknown[] = input.instructions == null ? [] : [...this.#system!.prompt];
    const { messages } = input;
    const segments: Segment[] = [];
    let start = 0;
    for (let end = 1; end <= messages.length; end++) {
      if (end < messages.length && messages[end]!.role !== "user") continue;
      const kept = this.#segments[segments.length];
      let segment: Segment;
      if (kept !== undefined && sameMessages(kept.messages, messages, start, end)) segment = kept;
      else {
        const part = messages.slice(start, end);
        segment = { messages: part, prompt: await call(part) };
      }
      segments.push(segment);
      for (const message of segment.prompt) out.push(message);
      start = end;
    }
    this.#segments = segments;
    return out;
  }
}

/** Whether `messages[start..end)` are the same objects as `kept`. */
function sameMessages(
  kept: readonly ModelMessage[],
  messages: readonly ModelMessage[],
  start: number,
  end: number,
): boolean {
  if (kept.length !== end - start) return false;
  for (let index = start; index < end; index++) if (kept[index - start] !== messages[index]) return false;
  return true;
}

/**
 * Whether two providers' URL support is the same: the same object, or the same media types with
 * the same patterns (a provider may build the record anew on every read).
 */
function sameSupportedUrls(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== "object" || typeof b !== "object" || a === null || b === null) return false;
  const keys = Object.keys(a);
  if (keys.length !== Object.keys(b).length) return false;
  return keys.every((key) => {
    const left = (a as Record<string, unknown>)[key];
    const right = (b as Record<string, unknown>)[key];
    if (!Array.isArray(left) || !Array.isArray(right) || left.length !== right.length) return false;
    return left.every((pattern, index) => {
      const other = right[index];
      return (
        pattern instanceof RegExp &&
        other instanceof RegExp &&
        pattern.source === other.source &&
        pattern.flags === other.flags
      );
    });
  });
}
