import type { AddressInfo } from "node:net";
import { createPai, defineAgent, defineTool } from "@pai/core";
import { scriptedModel } from "@pai/core/testing";
import { memoryStorage } from "@pai/storage-memory";
import { createPaiRouter, guardTransformer } from "@pai/transport-trpc";
import { createTRPCClient, httpBatchLink, httpSubscriptionLink, splitLink } from "@trpc/client";
import { initTRPC, TRPCError } from "@trpc/server";
import { createHTTPServer } from "@trpc/server/adapters/standalone";
import { lastAssistantMessageIsCompleteWithToolCalls, validateUIMessages } from "ai";
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
const agent = defineAgent({ tools: { pickColor } });
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
});
