import type { AddressInfo } from "node:net";
import { createPai, defineAgent, defineTool } from "@pai/core";
import { scriptedModel } from "@pai/core/testing";
import { memoryStorage } from "@pai/storage-memory";
import { createPaiRouter, guardTransformer } from "@pai/transport-trpc";
import { createTRPCClient, httpBatchLink, httpSubscriptionLink, splitLink } from "@trpc/client";
import { initTRPC, TRPCError } from "@trpc/server";
import { createHTTPServer } from "@trpc/server/adapters/standalone";
import {
  lastAssistantMessageIsCompleteWithApprovalResponses,
  lastAssistantMessageIsCompleteWithToolCalls,
  validateUIMessages,
} from "ai";
import { EventSource } from "eventsource";
import superjson from "superjson";
import { afterEach, describe, expect, it, vi } from "vitest";
import { z } from "zod";
import { PaiChatTransport, type PaiUIMessage, trpcChatConnection } from "../src/index.js";
import { createChatStreams } from "../src/server.js";
import { NodeChat } from "./node-chat.js";

/** A host that exposes nothing but tRPC: the chat protocol as `pai.chat.*` procedures over SSE. */

const pickColor = defineTool({
  id: "test.trpc-chat.pick-color.v1",
  description: "Ask the user to pick a color",
  inputSchema: z.object({}),
  outputSchema: z.object({ color: z.string() }),
});
const deploy = defineTool({
  id: "test.trpc-chat.deploy.v1",
  description: "Deploy once a person approves",
  inputSchema: z.object({}),
  outputSchema: z.object({ deployed: z.boolean() }),
  suspend: {
    confirm: {
      suspendSchema: z.object({}),
      resumeSchema: z.object({ approved: z.boolean(), reason: z.string().optional() }),
      approval: true,
    },
  },
  execute: async (ctx) =>
    ctx.entry.type === "initial" ? ctx.suspend("confirm", {}) : { deployed: ctx.entry.resume.approved },
});
const agent = defineAgent({ tools: { pickColor, deploy } });
type Message = PaiUIMessage<typeof agent>;

const closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
});

async function host() {
  const pai = createPai({
    storage: memoryStorage(),
    agents: { main: agent },
    model: scriptedModel((call) =>
      call.prompt.at(-1)?.role === "tool"
        ? { text: ["Nice ", "color."] }
        : JSON.stringify(call.prompt).includes("deploy")
          ? { toolCalls: [{ toolName: "deploy", toolCallId: "call-deploy", input: {} }] }
          : JSON.stringify(call.prompt).includes("color")
            ? { toolCalls: [{ toolName: "pickColor", toolCallId: "call-color", input: {} }] }
            : { text: ["Hi ", "there."] },
    ),
    scope: (user: { id: string }) => ({ scopeKey: "org", userKey: user.id }),
  });
  const t = initTRPC
    .context<{ user: { id: string } | null }>()
    .create({ transformer: guardTransformer(superjson) });
  const authed = t.procedure.use(({ ctx, next }) => {
    if (!ctx.user) throw new TRPCError({ code: "UNAUTHORIZED" });
    return next({ ctx: { user: ctx.user } });
  });
  const router = t.router({
    pai: createPaiRouter({
      procedure: authed,
      service: pai.service,
      identity: (ctx) => ctx.user,
      chat: createChatStreams(pai),
    }),
  });
  const server = createHTTPServer({
    router,
    createContext: ({ req }) => ({
      user: req.headers["x-user"] ? { id: String(req.headers["x-user"]) } : null,
    }),
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  closers.push(async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
    await pai.close();
  });
  const headers = { "x-user": "ada" };
  const client = createTRPCClient<typeof router>({
    links: [
      splitLink({
        condition: (op) => op.type === "subscription",
        true: httpSubscriptionLink({
          url,
          transformer: superjson,
          EventSource,
          eventSourceOptions: async () => ({
            fetch: (input: string | URL | Request, init?: RequestInit) => {
              const merged = new Headers(init?.headers);
              for (const [name, value] of Object.entries(headers)) merged.set(name, value);
              return fetch(input, { ...init, headers: merged });
            },
          }),
        }),
        false: httpBatchLink({ url, transformer: superjson, headers }),
      }),
    ],
  });
  const thread = await pai.service.threads.create({ identity: { id: "ada" } });
  return { pai, client, threadId: thread.threadId };
}

describe("the chat protocol over tRPC (real HTTP server, SSE subscriptions)", () => {
  it("streams a run and answers a client tool through the stock Chat", async () => {
    const { client, threadId } = await host();
    const transport = new PaiChatTransport<Message>({ connection: trpcChatConnection(client.pai.chat) });
    const chat = new NodeChat<Message>({
      id: threadId,
      transport,
      sendAutomaticallyWhen: lastAssistantMessageIsCompleteWithToolCalls,
    });
    await chat.sendMessage({ text: "hello" });
    expect(chat.lastMessage?.parts.at(-1)).toMatchObject({ type: "text", text: "Hi there." });

    await chat.sendMessage({ text: "pick a color" });
    expect(chat.lastMessage?.parts.find((part) => part.type === "tool-pickColor")).toMatchObject({
      state: "input-available",
    });
    await chat.addToolOutput({ tool: "pickColor", toolCallId: "call-color", output: { color: "teal" } });
    await vi.waitFor(
      () => {
        expect(chat.status).toBe("ready");
        expect(chat.lastMessage?.parts.at(-1)).toMatchObject({ type: "text", text: "Nice color." });
      },
      { timeout: 10_000, interval: 20 },
    );
    await validateUIMessages({ messages: chat.messages });
    const loaded = await transport.loadMessages(threadId);
    expect(loaded.map((message) => message.id)).toEqual(chat.messages.map((message) => message.id));
  });

  it("does not replay a waiting run to a page that loaded it (held version), and replays it to one that did not", async () => {
    const { client, threadId } = await host();
    const first = new NodeChat<Message>({
      id: threadId,
      transport: new PaiChatTransport<Message>({ connection: trpcChatConnection(client.pai.chat) }),
    });
    await first.sendMessage({ text: "please deploy" });
    await vi.waitFor(() => expect(first.status).toBe("ready"), { timeout: 10_000, interval: 20 });
    // Every resume subscription: its input and how many chunks it delivered.
    const resumes: Array<{ input: unknown; chunks: number }> = [];
    // The client is a proxy: its procedures are named, not spread.
    const counted = {
      send: client.pai.chat.send,
      messages: client.pai.chat.messages,
      held: client.pai.chat.held,
      resume: {
        subscribe: ((input: unknown, options: { onData(data: unknown): void }) => {
          const entry = { input, chunks: 0 };
          resumes.push(entry);
          return client.pai.chat.resume.subscribe(
            input as never,
            {
              ...options,
              onData: (data: unknown) => {
                entry.chunks++;
                options.onData(data);
              },
            } as never,
          );
        }) as never,
      },
    };
    const reload = () => {
      const transport = new PaiChatTransport<Message>({ connection: trpcChatConnection(counted) });
      const chat = new NodeChat<Message>({
        id: threadId,
        transport,
        sendAutomaticallyWhen: lastAssistantMessageIsCompleteWithApprovalResponses,
      });
      return { transport, chat };
    };
    // Loaded through the transport: the resume carries the version and gets nothing.
    const page = reload();
    page.chat.messages = await page.transport.loadMessages(threadId);
    const held = await client.pai.chat.held.query({ threadId });
    await page.chat.resumeStream();
    expect(resumes).toEqual([{ input: { threadId, since: held.version }, chunks: 0 }]);
    const part = page.chat.lastMessage!.parts.find((candidate) => candidate.type === "tool-deploy");
    expect(part).toMatchObject({ state: "approval-requested" });
    // Messages from elsewhere: no version to pass, so the waiting run is replayed as before.
    const other = reload();
    other.chat.messages = structuredClone(page.chat.messages);
    await other.chat.resumeStream();
    expect(resumes[1]).toMatchObject({ input: { threadId } });
    expect(resumes[1]!.chunks).toBeGreaterThan(0);
    await page.chat.addToolApprovalResponse({
      id: (part as { approval: { id: string } }).approval.id,
      approved: true,
    });
    await vi.waitFor(
      () => {
        expect(page.chat.status).toBe("ready");
        expect(
          page.chat.lastMessage?.parts.find((candidate) => candidate.type === "tool-deploy"),
        ).toMatchObject({
          state: "output-available",
          output: { deployed: true },
        });
      },
      { timeout: 10_000, interval: 20 },
    );
    await validateUIMessages({ messages: page.chat.messages });
  });
});
