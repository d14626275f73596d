import { createPaiClient } from "@pai/client";
import { defineAgent, PaiError } from "@pai/core";
import type { ScriptedModel } from "@pai/core/testing";
import { createTRPCUntypedClient, httpBatchLink, isTRPCClientError } from "@trpc/client";
import superjson from "superjson";
import { afterEach, describe, expect, it } from "vitest";
import { DEFAULT_PAI_ROUTER_LIMITS } from "../src/index.js";
import { createPaiSchemas } from "../src/schemas.js";
import { type HostUser, servedRuntimes, transportFor } from "./host-app.js";

// What a message may carry over tRPC. File parts: only https:, http: and data: URLs pass the
// router's input schema (BAD_REQUEST, 400, before the service runs), and an accepted URL reaches
// the model as it is. Ids: exact (no whitespace at either end, no control characters), and a
// stored one fits every storage's id column.

const alice: HostUser = { userId: "alice", scopeKey: "acme" };

const served = servedRuntimes();
afterEach(() => served.closeAll());

async function start() {
  const { runtime, host } = await served.start({
    agent: defineAgent({ name: "main" }),
    model: [{ text: "ok" }],
  });
  const raw = createTRPCUntypedClient({
    links: [
      httpBatchLink({
        url: host.url,
        transformer: superjson,
        headers: { authorization: `Bearer ${alice.userId}:${alice.scopeKey}` },
      }),
    ],
  });
  return { runtime, host, raw, service: runtime.pai.service };
}

async function rejection(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => {
      throw new Error("expected a rejection");
    },
    (caught: unknown) => caught,
  );
}

const fileMessage = (url: string) => ({
  parts: [
    { type: "text", text: "x" },
    { type: "file", mediaType: "text/plain", url },
  ],
});

describe("file part URLs over tRPC", () => {
  it("answers 400 BAD_REQUEST naming message.parts[1].url for other schemes, and writes nothing", async () => {
    const { raw, service } = await start();
    const thread = await service.threads.create({ identity: alice });
    const threadId = thread.threadId;
    const before = await service.threads.get({ identity: alice, threadId });
    for (const url of [
      "javascript:alert(1)",
      "file:///etc/passwd",
      "gopher://internal:70/_x",
      "not a url",
      "data:text/plain",
    ]) {
      const error = await rejection(
        raw.mutation("pai.threads.send", { threadId, message: fileMessage(url) }),
      );
      if (!isTRPCClientError(error)) throw error;
      const data = error.data as { code?: string; httpStatus?: number; pai?: { issues?: unknown } };
      expect([url, data.code, data.httpStatus]).toEqual([url, "BAD_REQUEST", 400]);
      expect(error.message).toMatch(/url (must be|is a data: URL)/);
      expect(data.pai?.issues).toEqual([expect.objectContaining({ path: ["message", "parts", 1, "url"] })]);
    }
    expect(await service.threads.get({ identity: alice, threadId })).toEqual(before);
  });

  it("reaches the client as INVALID_INPUT with the issue path", async () => {
    const { host } = await start();
    const client = createPaiClient({ transport: transportFor(host.url, alice) });
    const thread = await client.createThread();
    const error = await rejection(
      client.transport.threads.send({
        threadId: thread.id,
        message: fileMessage("javascript:alert(1)") as never,
      }),
    );
    if (!PaiError.isInstance(error)) throw error;
    expect(error.code).toBe("INVALID_INPUT");
    expect(error.issues?.[0]?.path).toEqual(["message", "parts", 1, "url"]);
  });

  it("accepts an https: URL and hands it to the model unfetched", async () => {
    const { raw, runtime, service } = await start();
    const thread = await service.threads.create({ identity: alice });
    const url = "https://files.example.com/report.txt";
    await raw.mutation("pai.threads.send", { threadId: thread.threadId, message: fileMessage(url) });
    await runtime.pai.waitForIdle(thread.threadId);
    const snapshot = await service.threads.get({ identity: alice, threadId: thread.threadId });
    expect(snapshot.runs.at(-1)?.status).toBe("completed");
    const prompt = (runtime.model as ScriptedModel).calls[0]!.prompt;
    const file = prompt
      .flatMap((message) => (message.role === "user" ? message.content : []))
      .find((part) => part.type === "file") as { data: { type: string; url: URL } } | undefined;
    expect(file?.data.type).toBe("url");
    expect(String(file?.data.url)).toBe(url);
  });

  it("the schema bounds the URL by the text limit and checks its scheme", () => {
    const schemas = createPaiSchemas({ ...DEFAULT_PAI_ROUTER_LIMITS, maxTextLength: 64 });
    const send = (url: string) =>
      schemas.threads.send.safeParse({ threadId: "t", message: fileMessage(url) }).success;
    expect(send("https://a.example/x")).toBe(true);
    expect(send("data:text/plain;base64,aGk=")).toBe(true);
    expect(send(`data:text/plain;base64,${"A".repeat(64)}`)).toBe(false);
    expect(send("vbscript:msgbox(1)")).toBe(false);
  });
});

describe("ids over tRPC", () => {
  it("answers 400 for ids with whitespace at either end or control characters, and for message ids over 191", async () => {
    const { raw, service } = await start();
    const thread = await service.threads.create({ identity: alice });
    const threadId = thread.threadId;
    const attempts = [
      () => raw.query("pai.threads.get", { threadId: `${threadId} ` }),
      () => raw.mutation("pai.threads.send", { threadId, message: { id: "m1 ", text: "hi" } }),
      () => raw.mutation("pai.threads.send", { threadId, message: { id: "m\u0000", text: "hi" } }),
      () => raw.mutation("pai.threads.send", { threadId, message: { id: "m".repeat(192), text: "hi" } }),
      () => raw.mutation("pai.actions.submit", { threadId, actionId: " a", payload: {} }),
    ];
    for (const [index, attempt] of attempts.entries()) {
      const error = await rejection(attempt());
      if (!isTRPCClientError(error)) throw error;
      const data = error.data as { code?: string; httpStatus?: number };
      expect([index, data.code, data.httpStatus]).toEqual([index, "BAD_REQUEST", 400]);
    }
    expect((await service.threads.get({ identity: alice, threadId })).messages).toEqual([]);
  });

  it("says what is wrong in one sentence naming the path, not as the schema's JSON", async () => {
    const { raw, service } = await start();
    const thread = await service.threads.create({ identity: alice });
    const tooLong = await rejection(raw.query("pai.threads.get", { threadId: "t".repeat(5_000) }));
    if (!isTRPCClientError(tooLong)) throw tooLong;
    expect(tooLong.message).toBe(
      "Invalid input: threadId: Too big: expected string to have <=200 characters",
    );
    expect((tooLong.data as { pai?: { issues?: unknown } }).pai?.issues).toEqual([
      { message: "Too big: expected string to have <=200 characters", path: ["threadId"] },
    ]);
    const twoWrong = await rejection(
      raw.mutation("pai.threads.send", { threadId: thread.threadId, message: { id: "m1 ", text: 7 } }),
    );
    if (!isTRPCClientError(twoWrong)) throw twoWrong;
    // The message schema is a union; the sentence names the fields of the branch the value was meant for.
    expect(twoWrong.message).toBe(
      "Invalid input: message.text: Invalid input: expected string, received number; message.id: must not start or end with whitespace.",
    );
    const notAMessage = await rejection(
      raw.mutation("pai.threads.send", { threadId: thread.threadId, message: 7 }),
    );
    if (!isTRPCClientError(notAMessage)) throw notAMessage;
    expect(notAMessage.message).toBe("Invalid input: message: Invalid input: expected object");
  });
});
