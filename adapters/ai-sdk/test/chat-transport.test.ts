import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { createPai, defineAgent, defineTool, type StorageV1 } from "@pai/core";
import { scriptedModel } from "@pai/core/testing";
import { memoryStorage } from "@pai/storage-memory";
import {
  type AbstractChat,
  lastAssistantMessageIsCompleteWithApprovalResponses,
  lastAssistantMessageIsCompleteWithToolCalls,
  validateUIMessages,
} from "ai";
import { afterEach, describe, expect, it, vi } from "vitest";
import { z } from "zod";
import { PaiChatTransport, type PaiUIMessage } from "../src/index.js";
import { createPaiChatHandler, toNodeListener } from "../src/server.js";
import { NodeChat } from "./node-chat.js";
import { openPostgresStorage, type TestStorage } from "./postgres.js";

const pickColor = defineTool({
  id: "test.chat.pick-color.v1",
  description: "Ask the user to pick a color",
  inputSchema: z.object({ prompt: z.string() }),
  outputSchema: z.object({ color: z.string() }),
});

const deploy = defineTool({
  id: "test.chat.deploy.v1",
  description: "Deploy after an approval",
  inputSchema: z.object({ service: z.string() }),
  outputSchema: z.object({ deployed: z.boolean() }),
  dataSchemas: { progress: z.object({ pct: z.number() }) },
  suspend: {
    confirm: {
      suspendSchema: z.object({ service: z.string() }),
      resumeSchema: z.object({ approved: z.boolean(), reason: z.string().optional() }),
      approval: true,
    },
  },
  execute: async (ctx) => {
    if (ctx.entry.type === "initial") return ctx.suspend("confirm", { service: ctx.input.service });
    await ctx.data.write("progress", { pct: 0.5 }, { id: "deploy" });
    await ctx.data.write("progress", { pct: 1 }, { id: "deploy" });
    return { deployed: ctx.entry.resume.approved };
  },
});

const review = defineTool({
  id: "test.chat.review.v1",
  description: "Asks for details, then for a sign-off",
  inputSchema: z.object({ topic: z.string() }),
  outputSchema: z.object({ signed: z.boolean() }),
  suspend: {
    details: {
      suspendSchema: z.object({ topic: z.string() }),
      resumeSchema: z.object({ notes: z.string() }),
    },
    signOff: {
      suspendSchema: z.object({ notes: z.string() }),
      resumeSchema: z.object({ signed: z.boolean() }),
    },
  },
  execute: async (ctx) => {
    if (ctx.entry.type === "initial") return ctx.suspend("details", { topic: ctx.input.topic });
    if (ctx.entry.name === "details") return ctx.suspend("signOff", { notes: ctx.entry.resume.notes });
    return { signed: ctx.entry.resume.signed };
  },
});

let gate: { promise: Promise<void>; open: () => void } = openGate();
function openGate() {
  let open = () => {};
  const promise = new Promise<void>((resolve) => {
    open = resolve;
  });
  return { promise, open };
}

const slow = defineTool({
  id: "test.chat.slow.v1",
  description: "Takes its time",
  inputSchema: z.object({}),
  outputSchema: z.object({ done: z.boolean() }),
  execute: async () => {
    await gate.promise;
    return { done: true };
  },
});

const agent = defineAgent({ tools: { pickColor, deploy, slow, review } });
type ChatMessage = PaiUIMessage<typeof agent>;

function script() {
  return scriptedModel((call) => {
    const prompt = JSON.stringify(call.prompt);
    const last = call.prompt.at(-1);
    if (last?.role === "tool") return { text: ["All ", "done."] };
    if (prompt.includes("color")) {
      return {
        toolCalls: [{ toolName: "pickColor", toolCallId: "call-color", input: { prompt: "Pick one" } }],
      };
    }
    if (prompt.includes("deploy")) {
      return {
        text: ["Deploying ", "now."],
        toolCalls: [{ toolName: "deploy", toolCallId: "call-deploy", input: { service: "api" } }],
      };
    }
    if (prompt.includes("review"))
      return { toolCalls: [{ toolName: "review", toolCallId: "call-review", input: { topic: "churn" } }] };
    if (prompt.includes("slow"))
      return { toolCalls: [{ toolName: "slow", toolCallId: "call-slow", input: {} }] };
    return { text: ["Hello ", "there."] };
  });
}

type Server2 = { url: string; close(): Promise<void>; pai: ReturnType<typeof createPai> };

async function serve(storage: StorageV1, instanceId: string): Promise<Server2> {
  const pai = createPai({
    storage,
    agents: { main: agent },
    model: script(),
    instanceId,
    scope: (identity: { user: string }) => ({ scopeKey: "org", userKey: identity.user }),
  });
  const handler = createPaiChatHandler({
    pai,
    identity: (request) => {
      const user = request.headers.get("x-user");
      if (!user) throw new Error("no user");
      return { user };
    },
  });
  const server: Server = createServer(toNodeListener(handler));
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/chat`,
    pai,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await pai.close();
    },
  };
}

const open: Array<() => Promise<void>> = [];
afterEach(async () => {
  gate.open();
  for (const close of open.splice(0).reverse()) await close();
});

function chatOn(
  server: Server2,
  threadId: string,
  messages: ChatMessage[] = [],
  fetchImpl?: typeof globalThis.fetch,
) {
  const transport = new PaiChatTransport<ChatMessage>({
    api: server.url,
    headers: { "x-user": "ada" },
    ...(fetchImpl ? { fetch: fetchImpl } : {}),
  });
  const chat = new NodeChat<ChatMessage>({
    id: threadId,
    transport,
    messages,
    sendAutomaticallyWhen: (options) =>
      lastAssistantMessageIsCompleteWithToolCalls(options) ||
      lastAssistantMessageIsCompleteWithApprovalResponses(options),
  });
  return { chat, transport };
}

async function settled(chat: AbstractChat<ChatMessage>) {
  for (let i = 0; i < 400 && chat.status !== "ready" && chat.status !== "error"; i++) {
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  // An automatic send starts right after the previous response: wait for it too.
  await new Promise((resolve) => setTimeout(resolve, 30));
  for (let i = 0; i < 400 && chat.status !== "ready" && chat.status !== "error"; i++) {
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

function storedMessages(snapshot: { messages: Array<{ message: unknown }> }) {
  return snapshot.messages.map((row) => row.message) as ChatMessage[];
}

const engines: Array<{ name: string; open: () => Promise<TestStorage | null> }> = [
  {
    name: "memory",
    open: async () => {
      const storage = memoryStorage();
      return { instance: () => storage, dispose: async () => undefined };
    },
  },
  { name: "postgres", open: () => openPostgresStorage("chat_transport") },
  // Announcements batched: a commit and the next step's deltas reach watchers in one NOTIFY.
  {
    name: "postgres, publishDelayMs: 5",
    open: () => openPostgresStorage("chat_transport_window", { publishDelayMs: 5 }),
  },
];

describe.each(engines)("a stock AI SDK Chat on a PAI thread ($name)", ({ name, open: openStorage }) => {
  async function setup() {
    const opened = await openStorage();
    if (!opened) return null;
    open.push(opened.dispose);
    const server = await serve(opened.instance(), `${name}-a`);
    open.push(server.close);
    const thread = await server.pai.service.threads.create({ identity: { user: "ada" } });
    return { ...opened, server, threadId: thread.threadId };
  }

  it("streams a run as UI message chunks and answers a client tool with addToolOutput", async (context) => {
    const env = await setup();
    if (!env) return context.skip("Postgres is unreachable (outside CI only; under CI=true it fails)");
    const { chat } = chatOn(env.server, env.threadId);
    await chat.sendMessage({ text: "hi" });
    await settled(chat);
    expect(chat.status).toBe("ready");
    expect(chat.lastMessage?.parts.filter((part) => part.type === "text").map((part) => part.text)).toEqual([
      "Hello there.",
    ]);

    await chat.sendMessage({ text: "pick a color" });
    await settled(chat);
    const asking = chat.lastMessage!.parts.find((part) => part.type === "tool-pickColor");
    expect(asking).toMatchObject({ state: "input-available", input: { prompt: "Pick one" } });
    await chat.addToolOutput({ tool: "pickColor", toolCallId: "call-color", output: { color: "teal" } });
    await vi.waitFor(
      () => {
        expect(chat.status).toBe("ready");
        expect(chat.lastMessage!.parts.at(-1)).toMatchObject({ type: "text", text: "All done." });
      },
      { timeout: 10_000, interval: 20 },
    );
    expect(chat.error).toBeUndefined();
    expect(chat.lastMessage!.parts.find((part) => part.type === "tool-pickColor")).toMatchObject({
      state: "output-available",
      output: { color: "teal" },
    });
    expect(chat.lastMessage!.parts.at(-1)).toMatchObject({ type: "text", text: "All done." });

    const stored = await env.server.pai.service.threads.get({
      identity: { user: "ada" },
      threadId: env.threadId,
    });
    expect(stored.actions[0]).toMatchObject({
      actionId: "call-color",
      state: "submitted",
      resume: { color: "teal" },
    });
    await validateUIMessages({ messages: chat.messages });
    // What the chat holds is what the thread stores (ids, order, parts).
    expect(stripForCompare(chat.messages)).toEqual(stripForCompare(storedMessages(stored)));
  });

  it("shows an approval point in the SDK's approval-requested state and resumes on addToolApprovalResponse, with tool data as data parts", async (context) => {
    const env = await setup();
    if (!env) return context.skip("Postgres is unreachable (outside CI only; under CI=true it fails)");
    const first = chatOn(env.server, env.threadId);
    let chat = first.chat;
    await chat.sendMessage({ text: "please deploy" });
    await settled(chat);
    const part = chat.lastMessage!.parts.find((candidate) => candidate.type === "tool-deploy");
    expect(part).toMatchObject({ state: "approval-requested", input: { service: "api" } });
    const approvalId = (part as { approval: { id: string } }).approval.id;
    // A reload while the approval waits: the page loads the thread's messages as the chat held them.
    const loaded = await first.transport.loadMessages(env.threadId);
    expect(stripForCompare(loaded)).toEqual(stripForCompare(chat.messages));
    await validateUIMessages({ messages: loaded });
    const { chat: reloaded } = chatOn(env.server, env.threadId, loaded);
    chat = reloaded;
    await chat.addToolApprovalResponse({ id: approvalId, approved: true });
    // The SDK sends the approval on its own (sendAutomaticallyWhen), then streams the rest.
    await vi.waitFor(
      () => {
        expect(chat.status).toBe("ready");
        expect(chat.lastMessage!.parts.at(-1)).toMatchObject({ type: "text", text: "All done." });
      },
      { timeout: 10_000, interval: 20 },
    );
    expect(chat.error).toBeUndefined();
    const last = chat.lastMessage!;
    expect(last.parts.find((candidate) => candidate.type === "tool-deploy")).toMatchObject({
      state: "output-available",
      output: { deployed: true },
    });
    const progress = last.parts.filter((candidate) => candidate.type === "data-progress");
    expect(progress).toEqual([{ type: "data-progress", id: "call-deploy:deploy", data: { pct: 1 } }]);
    expect(last.parts.at(-1)).toMatchObject({ type: "text", text: "All done." });
    await validateUIMessages({ messages: chat.messages });
  });

  it("does not replay a waiting run a reloaded page already shows, so an approval answered at once is sent", async (context) => {
    const env = await setup();
    if (!env) return context.skip("Postgres is unreachable (outside CI only; under CI=true it fails)");
    const first = chatOn(env.server, env.threadId);
    await first.chat.sendMessage({ text: "please deploy" });
    await settled(first.chat);
    // A slow network (every chunk of a resume 30 ms apart) widens the window a replay would open:
    // a replay rebuilds the message from its start, over the approval the page just gave.
    const resumes: number[] = [];
    const slow: typeof globalThis.fetch = async (input, init) => {
      const response = await fetch(input, init);
      if ((init?.method ?? "GET") !== "GET" || String(input).includes("&messages")) return response;
      resumes.push(response.status);
      if (!response.body) return response;
      const reader = response.body.getReader();
      const body = new ReadableStream<Uint8Array>({
        async pull(controller) {
          await new Promise((resolve) => setTimeout(resolve, 30));
          const { done, value } = await reader.read();
          if (done) controller.close();
          else controller.enqueue(value);
        },
      });
      return new Response(body, { status: response.status, headers: response.headers });
    };
    // The reload: a new transport loads the thread, then the chat resumes as useChat({ resume }) does.
    const { chat: reloaded, transport } = chatOn(env.server, env.threadId, [], slow);
    const loaded = await transport.loadMessages(env.threadId);
    reloaded.messages = loaded;
    const part = loaded.at(-1)!.parts.find((candidate) => candidate.type === "tool-deploy");
    const approvalId = (part as { approval: { id: string } }).approval.id;
    const resuming = reloaded.resumeStream();
    await new Promise((resolve) => setTimeout(resolve, 10));
    await reloaded.addToolApprovalResponse({ id: approvalId, approved: true });
    await resuming;
    await vi.waitFor(
      () => {
        expect(reloaded.status).toBe("ready");
        expect(reloaded.lastMessage!.parts.at(-1)).toMatchObject({ type: "text", text: "All done." });
      },
      { timeout: 10_000, interval: 20 },
    );
    expect(resumes).toEqual([204]);
    expect(reloaded.lastMessage!.parts.find((candidate) => candidate.type === "tool-deploy")).toMatchObject({
      state: "output-available",
      output: { deployed: true },
    });
    await validateUIMessages({ messages: reloaded.messages });
  });

  it("replays a waiting run once the thread moved past what the page loaded: after a submit, the next wait point shows", async (context) => {
    const env = await setup();
    if (!env) return context.skip("Postgres is unreachable (outside CI only; under CI=true it fails)");
    const first = chatOn(env.server, env.threadId);
    await first.chat.sendMessage({ text: "please review" });
    await settled(first.chat);
    const { chat, transport } = chatOn(env.server, env.threadId);
    const loaded = await transport.loadMessages(env.threadId);
    chat.messages = loaded;
    const pending = (message: ChatMessage) =>
      message.parts.filter((part) => part.type === "data-pai-action") as Array<{
        id: string;
        data: { name: string; state: string };
      }>;
    const details = pending(loaded.at(-1)!).find((part) => part.data.state === "pending");
    expect(details?.data.name).toBe("review.details");
    // Nothing moved since the load: the resume has nothing to replay.
    await chat.resumeStream();
    expect(chat.status).toBe("ready");
    await transport.submit(env.threadId, {
      actionId: details!.id,
      name: "review.details",
      payload: { notes: "numbers first" },
    });
    // The run goes on to its next wait point; the replay shows it although the run waits again.
    await vi.waitFor(
      async () => {
        const now = await env.server.pai.service.threads.get({
          identity: { user: "ada" },
          threadId: env.threadId,
        });
        expect(
          now.actions.some((action) => action.state === "pending" && action.name === "review.signOff"),
        ).toBe(true);
      },
      { timeout: 10_000, interval: 20 },
    );
    await chat.resumeStream();
    await settled(chat);
    const signOff = pending(chat.lastMessage!).find((part) => part.data.name === "review.signOff");
    expect(signOff?.data.state).toBe("pending");
    await validateUIMessages({ messages: chat.messages });
  });

  it("answers a resume whose since is not a version with 400", async (context) => {
    const env = await setup();
    if (!env) return context.skip("Postgres is unreachable (outside CI only; under CI=true it fails)");
    for (const since of ["-1", "1.5", "x", "99999999999", ""]) {
      const response = await fetch(`${env.server.url}?threadId=${env.threadId}&since=${since}`, {
        headers: { "x-user": "ada" },
      });
      expect(response.status, since).toBe(400);
      expect(await response.json()).toMatchObject({ error: { code: "INVALID_INPUT" } });
    }
  });

  // Two instances share a database; memory storage belongs to one process, so only Postgres has it.
  const onSharedStorage = name === "memory" ? null : it;
  onSharedStorage?.(
    "a reconnect on another server instance replays the running run and follows it to the end",
    async (context) => {
      const env = await setup();
      if (!env) return context.skip("Postgres is unreachable (outside CI only; under CI=true it fails)");
      gate = openGate();
      const other = await serve(env.instance(), `${name}-b`);
      open.push(other.close);
      const first = chatOn(env.server, env.threadId);
      const sending = first.chat.sendMessage({ text: "do the slow thing" });
      // Wait for the slow call to be running on instance A.
      for (let i = 0; i < 200; i++) {
        const now = await env.server.pai.service.threads.get({
          identity: { user: "ada" },
          threadId: env.threadId,
        });
        if (now.messages.some((row) => row.role === "assistant")) break;
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
      // A reload: the page reads the thread, and the stock chat resumes on instance B.
      const reloaded = await other.pai.service.threads.get({
        identity: { user: "ada" },
        threadId: env.threadId,
      });
      const second = chatOn(other, env.threadId, storedMessages(reloaded));
      const resuming = second.chat.resumeStream();
      await new Promise((resolve) => setTimeout(resolve, 50));
      gate.open();
      await resuming;
      await sending;
      await settled(second.chat);
      await settled(first.chat);
      const stored = await other.pai.service.threads.get({
        identity: { user: "ada" },
        threadId: env.threadId,
      });
      expect(stored.runs.at(-1)?.status).toBe("completed");
      expect(second.chat.lastMessage!.parts.find((part) => part.type === "tool-slow")).toMatchObject({
        state: "output-available",
        output: { done: true },
      });
      expect(stripForCompare(second.chat.messages)).toEqual(stripForCompare(storedMessages(stored)));
      expect(stripForCompare(first.chat.messages)).toEqual(stripForCompare(storedMessages(stored)));
      await validateUIMessages({ messages: second.chat.messages });
    },
  );

  it("refuses a request without identity (401) and a thread of another scope (404)", async (context) => {
    const env = await setup();
    if (!env) return context.skip("Postgres is unreachable (outside CI only; under CI=true it fails)");
    const anonymous = await fetch(env.server.url, {
      method: "POST",
      body: JSON.stringify({ threadId: env.threadId }),
    });
    expect(anonymous.status).toBe(401);
    const missing = await fetch(env.server.url, {
      method: "POST",
      headers: { "x-user": "ada", "content-type": "application/json" },
      body: JSON.stringify({ threadId: "nope", message: { parts: [{ type: "text", text: "hi" }] } }),
    });
    expect(missing.status).toBe(404);
    const hostile = await fetch(env.server.url, {
      method: "POST",
      headers: { "x-user": "ada", "content-type": "application/json" },
      body: JSON.stringify({ threadId: env.threadId, extra: 1 }),
    });
    expect(hostile.status).toBe(400);
  });
});

/** Chat state keeps provider metadata and step boundaries the store does not; compare what both hold. */
function stripForCompare(messages: ChatMessage[]) {
  return messages.map((message) => ({
    id: message.id,
    role: message.role,
    parts: message.parts
      .filter((part) => !part.type.startsWith("data-"))
      .map((part) => {
        const { providerMetadata: _p, callProviderMetadata: _c, ...rest } = part as Record<string, unknown>;
        return rest;
      }),
  }));
}
