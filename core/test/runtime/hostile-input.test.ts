import { defineAgent, type StorageV1 } from "@pai/core";
import { memoryStorage } from "@pai/storage-memory";
import { describe, expect, it } from "vitest";
import { rejection } from "../behaviour/_helpers.js";
import { createTestRuntime } from "../support/test-runtime.js";

const chatty = { text: "Noted." };
const mallory = { scopeKey: "other-org", userKey: "mallory" };

describe("message ids chosen by the client", () => {
  it("refuses an id the thread already has (CONFLICT) and leaves every stored message as it was", async () => {
    const t = await createTestRuntime({ agent: defineAgent({ tools: {} }), model: [chatty, chatty, chatty] });
    const threadId = await t.createThread();
    await t.pai.service.threads.send({
      identity: t.identity,
      threadId,
      message: { id: "mine-1", text: "first" },
    });
    await t.waitForIdle(threadId);
    const before = await t.snapshot(threadId);
    const assistantId = before.messages.find((message) => message.role === "assistant")?.messageId;
    expect(assistantId).toEqual(expect.any(String));

    for (const id of ["mine-1", assistantId as string]) {
      const error = await rejection(
        t.pai.service.threads.send({ identity: t.identity, threadId, message: { id, text: "FORGED" } }),
      );
      expect(error.code).toBe("CONFLICT");
      expect(error.message).toContain(`"${id}"`);
    }
    const after = await t.snapshot(threadId);
    expect(after.messages).toEqual(before.messages);
    expect(after.runs).toHaveLength(1);

    // A new id, or none, is fine.
    await t.pai.service.threads.send({
      identity: t.identity,
      threadId,
      message: { id: "mine-2", text: "second" },
    });
    await t.waitForIdle(threadId);
    await t.pai.service.threads.send({ identity: t.identity, threadId, message: { text: "third" } });
    await t.waitForIdle(threadId);
    const texts = (await t.snapshot(threadId)).messages
      .filter((message) => message.role === "user")
      .map((message) => (message.message.parts[0] as { text: string }).text);
    expect(texts).toEqual(["first", "second", "third"]);
    await t.close();
  });
});

describe("ids that storage would not compare exactly", () => {
  // MySQL's binary collation pads with spaces: "m1" and "m1 " are one key there, so an id with
  // whitespace at an end could name (and overwrite) another row. Refused on every storage.
  it("refuses ids with whitespace at either end or control characters, and message ids longer than 191", async () => {
    const t = await createTestRuntime({ agent: defineAgent({ tools: {} }), model: [chatty] });
    const threadId = await t.createThread();
    const send = (id: string) =>
      rejection(t.pai.service.threads.send({ identity: t.identity, threadId, message: { id, text: "hi" } }));
    for (const id of ["m1 ", " m1", "m1\t", "m\u0001x"]) expect((await send(id)).code).toBe("INVALID_INPUT");
    expect((await send("m".repeat(192))).message).toContain("at most 191 characters");
    for (const alias of [`${threadId} `, `${threadId}\n`]) {
      const error = await rejection(t.pai.service.threads.get({ identity: t.identity, threadId: alias }));
      expect(error.code).toBe("INVALID_INPUT");
    }
    const action = await rejection(
      t.pai.service.actions.submit({ identity: t.identity, threadId, actionId: "a ", payload: {} }),
    );
    expect(action.code).toBe("INVALID_INPUT");
    expect((await t.snapshot(threadId)).messages).toEqual([]);
    // 191 characters, inner spaces and punctuation are fine.
    await t.pai.service.threads.send({
      identity: t.identity,
      threadId,
      message: { id: `a b:c/${"d".repeat(185)}`, text: "hi" },
    });
    await t.waitForIdle(threadId);
    expect((await t.snapshot(threadId)).messages[0]?.messageId).toHaveLength(191);
    const trusted = await rejection(
      t.pai.trusted.createThread({ threadId: "t1 ", scope: { scopeKey: "acme" } } as never),
    );
    expect(trusted.code).toBe("INVALID_INPUT");
    await t.close();
  });
});

describe("fields a client adds to message parts", () => {
  it("are not stored: a part keeps only the fields a user part has", async () => {
    const t = await createTestRuntime({ agent: defineAgent({ tools: {} }), model: [chatty] });
    const threadId = await t.createThread();
    const injected = {
      providerMetadata: {
        openaiCompatible: { type: "image_url", image_url: { url: "https://x.example/p.png" } },
      },
      state: "streaming",
      evil: { nested: true },
    };
    await t.pai.service.threads.send({
      identity: t.identity,
      threadId,
      message: {
        parts: [
          { type: "text", text: "hello", ...injected },
          {
            type: "file",
            mediaType: "image/png",
            url: "https://files.example/a.png",
            filename: "a.png",
            ...injected,
          },
          { type: "file", mediaType: "image/png", url: "https://files.example/b.png", ...injected },
        ],
      } as never,
    });
    await t.waitForIdle(threadId);
    const stored = (await t.snapshot(threadId)).messages.find((message) => message.role === "user");
    expect(stored?.message.parts).toEqual([
      { type: "text", text: "hello" },
      { type: "file", mediaType: "image/png", url: "https://files.example/a.png", filename: "a.png" },
      { type: "file", mediaType: "image/png", url: "https://files.example/b.png" },
    ]);
    // Nor do they reach the provider's prompt.
    const prompt = JSON.stringify(
      (t.model as unknown as { calls: Array<{ prompt: unknown }> }).calls[0]?.prompt,
    );
    expect(prompt).not.toContain("image_url");
    expect(prompt).not.toContain("evil");
    await t.close();
  });
});

describe("blank text parts", () => {
  it("refuses a message of blank text parts and stores a file without the blank text beside it", async () => {
    const t = await createTestRuntime({ agent: defineAgent({ tools: {} }), model: [chatty] });
    const threadId = await t.createThread();
    for (const parts of [
      [{ type: "text", text: "" }],
      [
        { type: "text", text: "  \n" },
        { type: "text", text: "" },
      ],
    ]) {
      const error = await rejection(
        t.pai.service.threads.send({ identity: t.identity, threadId, message: { parts: parts as never } }),
      );
      expect(error.code).toBe("INVALID_INPUT");
      expect(error.message).toContain("no content");
    }
    expect((await t.snapshot(threadId)).messages).toEqual([]);

    const file = { type: "file", mediaType: "image/png", url: "https://example.com/chart.png" };
    await t.pai.service.threads.send({
      identity: t.identity,
      threadId,
      message: { parts: [file, { type: "text", text: "" }] as never },
    });
    await t.waitForIdle(threadId);
    const [user] = (await t.snapshot(threadId)).messages;
    expect(user?.message.parts).toEqual([file]);
    expect((await t.lastRun(threadId))?.status).toBe("completed");
    await t.close();
  });
});

describe("text no storage can keep", () => {
  const bad = ["a\u0000b", "x\ud800y", "\udc00", "end\ud83d"];

  it("refuses NUL characters and unpaired surrogates in every field with INVALID_INPUT, before anything is written", async () => {
    const t = await createTestRuntime({ agent: defineAgent({ tools: {} }), model: [chatty] });
    const threadId = await t.createThread();
    const { identity } = t;
    for (const text of bad) {
      const calls: Array<[string, () => Promise<unknown>, Array<string | number>]> = [
        ["title", () => t.pai.service.threads.create({ identity, title: text }), ["title"]],
        [
          "metadata value",
          () => t.pai.service.threads.create({ identity, metadata: { k: text } }),
          ["metadata", "k"],
        ],
        [
          "metadata key",
          () => t.pai.service.threads.create({ identity, metadata: { [text]: 1 } }),
          ["metadata", text],
        ],
        [
          "message text",
          () => t.pai.service.threads.send({ identity, threadId, message: { text } }),
          ["message", "text"],
        ],
        [
          "message id",
          () => t.pai.service.threads.send({ identity, threadId, message: { id: text, text: "hi" } }),
          ["message", "id"],
        ],
        [
          "a part's text",
          () =>
            t.pai.service.threads.send({
              identity,
              threadId,
              message: {
                parts: [
                  { type: "text", text: "ok" },
                  { type: "text", text },
                ],
              },
            }),
          ["message", "parts", 1, "text"],
        ],
        ["thread id", () => t.pai.service.threads.get({ identity, threadId: text }), ["threadId"]],
        [
          "cancel reason",
          () => t.pai.service.threads.cancel({ identity, threadId, reason: text }),
          ["reason"],
        ],
      ];
      for (const [label, call, path] of calls) {
        const error = await rejection(call());
        expect(error.code, `${label} ${JSON.stringify(text)}`).toBe("INVALID_INPUT");
        expect(error.issues?.[0]?.path, label).toEqual(path);
        expect(error.message, label).toContain("NUL character");
      }
    }
    const stored = await t.snapshot(threadId);
    expect(stored.messages).toEqual([]);
    expect(stored.runs).toEqual([]);
    expect((await t.pai.service.threads.list({ identity })).items).toHaveLength(1);
    await t.close();
  });

  it("keeps well-formed text: surrogate pairs (emoji), other control characters, escapes spelled out", async () => {
    const t = await createTestRuntime({ agent: defineAgent({ tools: {} }), model: [chatty] });
    const title = "ship 🚢 \t\u0001 \\u0000";
    const thread = await t.pai.service.threads.create({
      identity: t.identity,
      title,
      metadata: { "🔑": "🚢" },
    });
    expect(thread.title).toBe(title);
    await t.pai.service.threads.send({
      identity: t.identity,
      threadId: thread.threadId,
      message: { text: "👍" },
    });
    await t.waitForIdle(thread.threadId);
    expect((await t.snapshot(thread.threadId)).messages).toHaveLength(2);
    await t.close();
  });

  it("walks hostile nesting without overflowing the stack; the JSON limits refuse it", async () => {
    const t = await createTestRuntime({ agent: defineAgent({ tools: {} }), model: [] });
    let value: unknown = "x\u0000";
    for (let index = 0; index < 200_000; index++) value = { a: value };
    const error = await rejection(
      t.pai.service.threads.create({ identity: t.identity, metadata: value as never }),
    );
    expect(error.code).toBe("INVALID_INPUT");
    await t.close();
  });
});

describe("another tenant's thread id", () => {
  it("is refused after the same storage read as an unknown id, even while this process keeps the thread", async () => {
    let reads = 0;
    const inner = memoryStorage();
    const storage: StorageV1 = {
      ...inner,
      loadThread: (input) => {
        reads += 1;
        return inner.loadThread(input);
      },
    };
    const t = await createTestRuntime({ agent: defineAgent({ tools: {} }), model: [chatty], storage });
    const threadId = await t.createThread();
    await t.pai.service.threads.send({ identity: t.identity, threadId, message: { text: "hi" } });
    await t.waitForIdle(threadId);

    const readsFor = async (id: string) => {
      const start = reads;
      const error = await rejection(
        t.pai.service.threads.send({ identity: mallory, threadId: id, message: { text: "hello?" } }),
      );
      expect(error.code).toBe("NOT_FOUND");
      expect(error.message).toBe(`Thread ${id} was not found.`);
      return reads - start;
    };
    const foreign = await readsFor(threadId);
    const unknown = await readsFor("thr_does_not_exist");
    expect(unknown).toBe(1);
    expect(foreign).toBe(unknown);
    await t.close();
  });
});
