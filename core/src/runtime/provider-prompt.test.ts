import type { ModelMessage } from "ai";
import { convertToLanguageModelPrompt } from "ai/internal";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { passUrlsThrough } from "./model-call.js";
import { type ConvertPrompt, ProviderPromptCache } from "./provider-prompt.js";

// Every URL counts as supported, and none is downloaded.
const supportedUrls = { "*": [/.*/] };
const convert = convertToLanguageModelPrompt as unknown as ConvertPrompt;
const whole = (messages: ModelMessage[], instructions?: string) =>
  convert({
    prompt: instructions === undefined ? { messages } : { instructions, messages },
    supportedUrls,
    download: passUrlsThrough,
    provider: "test",
  });

/** Counts the SDK conversions a cache makes, and the messages they were given. */
function counting() {
  const seen = { calls: 0, messages: 0 };
  const counted: ConvertPrompt = (options) => {
    seen.calls++;
    seen.messages += options.prompt.messages.length;
    return convert(options);
  };
  return { seen, counted };
}

const model = {};
const step = (
  cache: ProviderPromptCache,
  messages: ModelMessage[],
  options: {
    convert?: ConvertPrompt;
    instructions?: string;
    model?: unknown;
    urls?: unknown;
    download?: Parameters<ConvertPrompt>[0]["download"];
  } = {},
) =>
  cache.convert(options.convert ?? convert, {
    model: options.model ?? model,
    instructions: options.instructions,
    messages,
    supportedUrls: options.urls ?? supportedUrls,
    download: options.download ?? passUrlsThrough,
    provider: "test",
  });

const options = { providerOptions: { test: { cache: true } } };
const userText = (text: string): ModelMessage => ({ role: "user", content: text });
const call = (id: string): ModelMessage => ({
  role: "assistant",
  content: [
    { type: "text", text: `calling ${id}` },
    { type: "tool-call", toolCallId: id, toolName: "lookup", input: { q: id } },
  ],
});
const result = (id: string, extra = false): ModelMessage => ({
  role: "tool",
  content: [
    {
      type: "tool-result",
      toolCallId: id,
      toolName: "lookup",
      output: { type: "json", value: { id } },
      ...(extra ? options : {}),
    },
  ],
  ...(extra ? options : {}),
});

/** One user turn: a question, then tool rounds (each answered, results in one or two tool messages), then text. */
const turn = fc.record({
  question: fc.oneof(
    fc.string({ maxLength: 8 }),
    fc.constant(""),
    fc.constant("with a file"),
    fc.constant("with an image"),
  ),
  rounds: fc.array(fc.record({ calls: fc.integer({ min: 1, max: 3 }), split: fc.boolean() }), {
    maxLength: 3,
  }),
  answer: fc.oneof(fc.string({ maxLength: 8 }), fc.constant("")),
  providerOptions: fc.boolean(),
});

let ids = 0;
type Turn = typeof turn extends fc.Arbitrary<infer T> ? T : never;

function turnMessages(spec: Turn): ModelMessage[] {
  const out: ModelMessage[] = [];
  if (spec.question === "with a file")
    out.push({
      role: "user",
      content: [
        { type: "text", text: "see" },
        { type: "file", data: new URL("https://example.com/a.pdf"), mediaType: "application/pdf" },
      ],
    });
  else if (spec.question === "with an image")
    out.push({ role: "user", content: [{ type: "image", image: "aGVsbG8=", mediaType: "image/png" }] });
  else out.push({ ...userText(spec.question), ...(spec.providerOptions ? options : {}) });
  for (const round of spec.rounds) {
    const callIds = Array.from({ length: round.calls }, () => `c${++ids}`);
    out.push({
      role: "assistant",
      content: callIds.map((id) => ({
        type: "tool-call" as const,
        toolCallId: id,
        toolName: "lookup",
        input: {},
      })),
    });
    if (round.split && callIds.length > 1) {
      // Results in consecutive tool messages: the SDK merges them into one.
      for (const id of callIds) out.push(result(id, spec.providerOptions));
    } else
      out.push({
        role: "tool",
        content: callIds.map((id) => ({
          type: "tool-result" as const,
          toolCallId: id,
          toolName: "lookup",
          output: { type: "text" as const, value: id },
        })),
      });
  }
  out.push({ role: "assistant", content: spec.answer });
  return out;
}

describe("ProviderPromptCache", () => {
  it("gives the SDK's whole conversion, step after step, as a history grows and changes", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(turn, { minLength: 1, maxLength: 6 }),
        fc.array(fc.nat(), { maxLength: 4 }),
        fc.boolean(),
        async (turns, replacements, instructions) => {
          const cache = new ProviderPromptCache();
          const system = instructions ? "be brief" : undefined;
          let history: ModelMessage[] = [];
          for (const spec of turns) {
            history = [...history, ...turnMessages(spec)];
            expect(await step(cache, history, system ? { instructions: system } : {})).toEqual(
              await whole(history, system),
            );
          }
          // A message replaced anywhere (an edited or re-read row) converts right too.
          for (const at of replacements) {
            const index = at % history.length;
            history = history.slice();
            history[index] = { ...history[index]! } as ModelMessage;
            expect(await step(cache, history, system ? { instructions: system } : {})).toEqual(
              await whole(history, system),
            );
          }
        },
      ),
      { numRuns: 150 },
    );
  });

  it("converts only the user turns that changed since the last step", async () => {
    const cache = new ProviderPromptCache();
    const { seen, counted } = counting();
    const history = [
      userText("one"),
      call("a"),
      result("a"),
      { role: "assistant", content: "done" } as ModelMessage,
    ];
    await step(cache, history, { convert: counted });
    expect(seen).toEqual({ calls: 1, messages: 4 });
    // The next turn: the first one's prompt is kept.
    const next = [...history, userText("two"), call("b")];
    const partial = [...next, result("b")];
    await step(cache, partial, { convert: counted });
    expect(seen).toEqual({ calls: 2, messages: 7 });
    // Its tool result arrives: only that turn is converted again.
    await step(cache, [...partial, { role: "assistant", content: "ok" }], { convert: counted });
    expect(seen).toEqual({ calls: 3, messages: 11 });
  });

  it("converts the same instructions once", async () => {
    const cache = new ProviderPromptCache();
    const { seen, counted } = counting();
    const history = [userText("one"), { role: "assistant", content: "hi" } as ModelMessage];
    await step(cache, history, { convert: counted, instructions: "be brief" });
    expect(await step(cache, history, { convert: counted, instructions: "be brief" })).toEqual(
      await whole(history, "be brief"),
    );
    expect(seen.calls).toBe(2);
    await step(cache, history, { convert: counted, instructions: "be kind" });
    expect(seen.calls).toBe(3);
  });

  it("starts over for another model or other URL support, not for the same support built anew", async () => {
    const cache = new ProviderPromptCache();
    const { seen, counted } = counting();
    const history = [userText("one"), { role: "assistant", content: "hi" } as ModelMessage];
    await step(cache, history, { convert: counted });
    await step(cache, history, { convert: counted, urls: { "*": [/.*/] } });
    expect(seen.calls).toBe(1);
    await step(cache, history, { convert: counted, urls: { "image/*": [/.*/] } });
    expect(seen.calls).toBe(2);
    await step(cache, history, { convert: counted, model: {}, urls: { "image/*": [/.*/] } });
    expect(seen.calls).toBe(3);
  });

  it("starts over for another download function", async () => {
    const cache = new ProviderPromptCache();
    const { seen, counted } = counting();
    const history = [userText("one"), { role: "assistant", content: "hi" } as ModelMessage];
    await step(cache, history, { convert: counted });
    await step(cache, history, { convert: counted });
    expect(seen.calls).toBe(1);
    await step(cache, history, { convert: counted, download: async (requests) => requests.map(() => null) });
    expect(seen.calls).toBe(2);
  });

  it("refuses a history with an unanswered tool call, as the SDK does", async () => {
    const history = [
      userText("one"),
      call("a"),
      userText("two"),
      { role: "assistant", content: "x" } as ModelMessage,
    ];
    const sdk = await whole(history).catch((error: Error) => error);
    const cached = await step(new ProviderPromptCache(), history).catch((error: Error) => error);
    expect(sdk).toBeInstanceOf(Error);
    expect(cached).toBeInstanceOf(Error);
    expect((cached as Error).name).toBe((sdk as Error).name);
    expect((cached as Error).message).toBe((sdk as Error).message);
  });
});
