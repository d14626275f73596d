import type { AddressInfo } from "node:net";
import { initTRPC, TRPCError } from "@trpc/server";
import { createHTTPServer } from "@trpc/server/adapters/standalone";
import superjson from "superjson";
import { afterEach, describe, expect, it } from "vitest";
import { createChatProcedures, type PaiChatStreams } from "../src/chat-procedures.js";
import {
  createPaiRouter,
  DEFAULT_PAI_ROUTER_LIMITS,
  guardTransformer,
  type PaiRouterLimits,
  paiErrorData,
} from "../src/index.js";
import { createPaiSchemas } from "../src/schemas.js";
import { type SubscriptionError, subscriptionError } from "./sse-subscription.js";

/**
 * `chat.send` holds the chat body to the router's limits as `threads.send` does: client tools,
 * parts and ids. The chat streams get the limits to parse with, and the router checks the parsed
 * body itself, so chat streams that parse without them (another version, a host's own) cannot
 * let a body past. Real HTTP, SSE read raw.
 */

type User = { userId: string };

/** Chat streams that accept any body, as one that knows no limits would; it records what it gets. */
function lenientStreams() {
  const parsedWith: unknown[] = [];
  const posted: unknown[] = [];
  const streams: PaiChatStreams<User> = {
    parse: (raw, limits) => {
      parsedWith.push(limits);
      return raw;
    },
    post: async ({ body }) => {
      posted.push(body);
      return { type: "answered", answered: true };
    },
    resume: async () => null,
    messages: async () => [],
    heldMessages: async () => ({ messages: [], version: 0 }),
  };
  return { streams, parsedWith, posted };
}

const t = initTRPC.context<{ user: User }>().create({
  transformer: guardTransformer(superjson),
  errorFormatter: ({ shape, error }) => ({ ...shape, data: { ...shape.data, pai: paiErrorData(error) } }),
});
const authed = t.procedure.use(({ ctx, next }) => {
  if (!ctx.user) throw new TRPCError({ code: "UNAUTHORIZED" });
  return next({ ctx });
});

const closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const close of closers.splice(0)) await close();
});

type ErrorShape = SubscriptionError;

async function serve(router: Parameters<typeof createHTTPServer>[0]["router"]) {
  const server = createHTTPServer({ router, createContext: () => ({ user: { userId: "ada" } }) });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  closers.push(async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return (path: string, input: unknown) => subscriptionError(url, path, input);
}

const tool = (name: string) => ({ name, description: "d", inputSchema: { type: "object" } });
const parts = [{ type: "text", text: "hi" }];

function expectRefused(error: ErrorShape | null, path: Array<string | number>) {
  expect(error?.data, path.join(".")).toMatchObject({
    httpStatus: 400,
    code: "BAD_REQUEST",
    pai: { code: "INVALID_INPUT" },
  });
  expect(error?.data.pai.issues?.[0]?.path, path.join(".")).toEqual(path);
}

describe("chat.send and the router's limits (real HTTP, SSE)", () => {
  it("refuses, with createPaiRouter's defaults, what threads.send refuses, even when the chat streams parse without limits", async () => {
    const { streams, parsedWith, posted } = lenientStreams();
    const router = t.router({
      pai: createPaiRouter({
        procedure: authed,
        service: {} as never,
        identity: (ctx) => ctx.user,
        chat: streams,
      }),
    });
    const subscribe = await serve(router);
    const many = Array.from({ length: 100 }, (_, index) => tool(`t${index}`));
    expectRefused(
      await subscribe("pai.chat.send", { threadId: "th", message: { parts }, clientTools: many }),
      ["clientTools"],
    );
    expectRefused(
      await subscribe("pai.chat.send", { threadId: "th", message: { id: "m".repeat(192), parts } }),
      ["message", "id"],
    );
    expectRefused(await subscribe("pai.chat.send", { threadId: "t".repeat(201), message: { parts } }), [
      "threadId",
    ]);
    expectRefused(
      await subscribe("pai.chat.send", {
        threadId: "th",
        message: { parts: Array.from({ length: 65 }, () => parts[0]) },
      }),
      ["message", "parts"],
    );
    expectRefused(
      await subscribe("pai.chat.send", {
        threadId: "th",
        answers: [{ type: "action", actionId: "a".repeat(201), kind: "cancel" }],
      }),
      ["answers", 0, "actionId"],
    );
    expectRefused(
      await subscribe("pai.chat.send", {
        threadId: "th",
        answers: [{ type: "tool-output", toolCallId: " call", output: 1 }],
      }),
      ["answers", 0, "toolCallId"],
    );
    // A reconnect (lastEventId) carries the same body: it is held to the same limits.
    expectRefused(
      await subscribe("pai.chat.send", {
        threadId: "th",
        message: { parts },
        clientTools: many,
        lastEventId: "run-1:3",
      }),
      ["clientTools"],
    );
    expect(posted).toEqual([]);
    // The streams were asked to parse within the router's limits.
    expect(parsedWith[0]).toEqual({
      maxIdLength: DEFAULT_PAI_ROUTER_LIMITS.maxIdLength,
      maxMessageParts: DEFAULT_PAI_ROUTER_LIMITS.maxMessageParts,
      maxClientTools: DEFAULT_PAI_ROUTER_LIMITS.maxClientTools,
      maxJsonSize: DEFAULT_PAI_ROUTER_LIMITS.maxJsonSize,
      maxJsonDepth: DEFAULT_PAI_ROUTER_LIMITS.maxJsonDepth,
    });

    // At the limits the body reaches the streams.
    const atLimits = {
      threadId: "t".repeat(200),
      message: { id: "m".repeat(191), parts: Array.from({ length: 64 }, () => parts[0]) },
      clientTools: many.slice(0, 32),
    };
    expect(await subscribe("pai.chat.send", atLimits)).toBeNull();
    expect(posted).toEqual([atLimits]);
  });

  it("uses the limits it is given", async () => {
    const limits: PaiRouterLimits = {
      ...DEFAULT_PAI_ROUTER_LIMITS,
      maxClientTools: 2,
      maxMessageParts: 1,
      maxIdLength: 8,
    };
    const { streams, parsedWith, posted } = lenientStreams();
    const router = t.router({
      chat: createChatProcedures({
        procedure: authed,
        schemas: createPaiSchemas(limits).chat,
        limits,
        chat: streams,
        identity: (ctx) => ctx.user,
      }),
    });
    const subscribe = await serve(router);
    expectRefused(
      await subscribe("chat.send", {
        threadId: "th",
        message: { parts },
        clientTools: [tool("a"), tool("b"), tool("c")],
      }),
      ["clientTools"],
    );
    expectRefused(
      await subscribe("chat.send", { threadId: "th", message: { parts: [...parts, ...parts] } }),
      ["message", "parts"],
    );
    expectRefused(await subscribe("chat.send", { threadId: "th", message: { id: "m".repeat(9), parts } }), [
      "message",
      "id",
    ]);
    expect(posted).toEqual([]);
    expect(parsedWith[0]).toMatchObject({ maxClientTools: 2, maxMessageParts: 1, maxIdLength: 8 });
    const fine = {
      threadId: "th",
      message: { id: "m".repeat(8), parts },
      clientTools: [tool("a"), tool("b")],
    };
    expect(await subscribe("chat.send", fine)).toBeNull();
    expect(posted).toEqual([fine]);
  });

  it("createPaiRouter hands its own limits to chat.send", async () => {
    const { streams, parsedWith, posted } = lenientStreams();
    const router = t.router({
      pai: createPaiRouter({
        procedure: authed,
        service: {} as never,
        identity: (ctx) => ctx.user,
        chat: streams,
        limits: { maxClientTools: 2 },
      }),
    });
    const subscribe = await serve(router);
    expectRefused(
      await subscribe("pai.chat.send", {
        threadId: "th",
        message: { parts },
        clientTools: [tool("a"), tool("b"), tool("c")],
      }),
      ["clientTools"],
    );
    expect(posted).toEqual([]);
    expect(parsedWith[0]).toMatchObject({ maxClientTools: 2 });
  });
});
