import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import {
  createPai,
  defineAgent,
  defineTool,
  PAI_ERROR_CODES,
  PAI_ERROR_HTTP_STATUS,
  PaiError,
  type PaiErrorCode,
} from "@pai/core";
import { scriptedModel } from "@pai/core/testing";
import { memoryStorage } from "@pai/storage-memory";
import {
  createPaiRouter,
  DEFAULT_PAI_ROUTER_LIMITS,
  guardTransformer,
  paiErrorData,
} from "@pai/transport-trpc";
import { initTRPC, TRPCError } from "@trpc/server";
import { createHTTPServer } from "@trpc/server/adapters/standalone";
import superjson from "superjson";
import { afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { type SubscriptionError, subscriptionError } from "../../transport-trpc/test/sse-subscription.js";
import { type ChatPai, createChatStreams, createPaiChatHandler, toNodeListener } from "../src/server.js";
import { DEFAULT_PAI_CHAT_LIMITS } from "../src/wire.js";

/**
 * A chat body is held to the bounds of `threads.send` before anything walks it: JSON values
 * (payload, output, clientData, parts, client tools) by depth and size, ids by length (never more
 * than the 191 characters MySQL's id columns hold), parts and client tools by count. Both the
 * fetch handler and `chat.send` over tRPC, over real HTTP.
 */

const pickColor = defineTool({
  id: "test.bounds.pick-color.v1",
  description: "Ask the user to pick a color",
  inputSchema: z.object({}),
  outputSchema: z.object({ color: z.string() }),
});
const agent = defineAgent({ tools: { pickColor } });
const ada = { user: "ada" };

const closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
});

function newPai() {
  const pai = createPai({
    storage: memoryStorage(),
    agents: { main: agent },
    model: scriptedModel((call) =>
      JSON.stringify(call.prompt).includes("color")
        ? { toolCalls: [{ toolName: "pickColor", toolCallId: "call-color", input: {} }] }
        : { text: ["Hi."] },
    ),
    scope: (identity: { user: string }) => ({ scopeKey: "org", userKey: identity.user }),
  });
  closers.push(() => pai.close());
  return pai;
}

/** The service with every call it receives recorded, by path. */
function recorded<T extends object>(service: T): { service: T; calls: string[] } {
  const calls: string[] = [];
  const wrap = (value: unknown, path: string): unknown => {
    if (typeof value === "function") {
      return (...args: unknown[]) => {
        calls.push(path);
        return (value as (...args: unknown[]) => unknown)(...args);
      };
    }
    if (value && typeof value === "object") {
      return Object.fromEntries(
        Object.entries(value).map(([key, entry]) => [key, wrap(entry, path ? `${path}.${key}` : key)]),
      );
    }
    return value;
  };
  return { service: wrap(service, "") as T, calls };
}

async function listen(server: Server): Promise<string> {
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  closers.unshift(async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

/** The fetch handler on node:http, with the service calls it makes recorded. */
async function handlerHost(pai: ChatPai<{ user: string }> = newPai()) {
  const { service, calls } = recorded(pai.service);
  const handler = createPaiChatHandler({ pai: { service, agents: pai.agents }, identity: () => ada });
  const url = await listen(createServer(toNodeListener(handler)));
  const post = async (body: string | object) => {
    const response = await fetch(url, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: typeof body === "string" ? body : JSON.stringify(body),
    });
    const text = await response.text();
    // A sent message answers with the run's stream; a refusal with JSON.
    const json = response.headers.get("content-type")?.includes("application/json");
    const error = json
      ? (JSON.parse(text) as { error?: { code: string; message: string } }).error
      : undefined;
    return { status: response.status, text, error };
  };
  return { url, post, calls, service: pai.service };
}

function nested(depth: number, leaf: unknown): unknown {
  let value = leaf;
  for (let index = 0; index < depth; index++) value = [value];
  return value;
}

const tool = (name: string, extra: Record<string, unknown> = {}) => ({
  name,
  description: "d",
  inputSchema: { type: "object" },
  ...extra,
});
const text = (value: string) => ({ type: "text", text: value });

describe("the fetch chat handler bounds the JSON in a chat body (real HTTP)", () => {
  it("refuses a wide value nested 250 levels deep in an action payload with 400, before any service call walks it", async () => {
    const { post, calls, service } = await handlerHost();
    const thread = await service.threads.create({ identity: ada });
    // The audit's body: ~900 KB, a 200,000-wide array 250 levels down.
    const deepWide = `${"[".repeat(250)}${'"",'.repeat(199_999)}""${"]".repeat(250)}`;
    const body = `{"threadId":"${thread.threadId}","answers":[{"type":"action","actionId":"nope","kind":"submit","payload":${deepWide}}]}`;
    const refused = await post(body);
    expect(refused.status).toBe(400);
    expect(refused.error?.code).toBe("INVALID_INPUT");
    expect(refused.error?.message).toContain("answers.0.payload");
    expect(refused.error?.message).toContain("nested deeper than the limit of 64 levels");
    expect(calls).toEqual([]);
  });

  it("bounds output, clientData, client tool schemas and message parts by depth, size and forbidden keys", async () => {
    const { post, calls, service } = await handlerHost();
    const { threadId } = await service.threads.create({ identity: ada });
    const deep = nested(70, 1);
    const large = "x".repeat(300 * 1024);
    const cases: Array<[string, object, string]> = [
      [
        "tool output",
        { threadId, answers: [{ type: "tool-output", toolCallId: "call-color", output: deep }] },
        "answers.0.output",
      ],
      ["clientData depth", { threadId, message: { parts: [text("hi")] }, clientData: deep }, "clientData"],
      [
        "clientData size",
        { threadId, message: { parts: [text("hi")] }, clientData: { large } },
        "clientData",
      ],
      [
        "a client tool's schema",
        {
          threadId,
          message: { parts: [text("hi")] },
          clientTools: [tool("t", { inputSchema: { x: deep } })],
        },
        "clientTools.0",
      ],
      [
        "a part's extra field",
        { threadId, message: { parts: [{ type: "text", text: "hi", providerMetadata: deep }] } },
        "message.parts.0",
      ],
      ["a large part", { threadId, message: { parts: [text(large)] } }, "message.parts.0"],
    ];
    for (const [label, body, path] of cases) {
      const refused = await post(body);
      expect(refused.status, label).toBe(400);
      expect(refused.error?.code, label).toBe("INVALID_INPUT");
      expect(refused.error?.message, label).toContain(`${path}: JSON value`);
    }
    const forbidden = await post(
      `{"threadId":"${threadId}","message":{"parts":[{"type":"text","text":"hi"}]},"clientData":{"a":{"__proto__":{"admin":true}}}}`,
    );
    expect(forbidden.status).toBe(400);
    expect(forbidden.error?.message).toContain('uses the key "__proto__"');
    expect(calls).toEqual([]);

    // Within the bounds: 64 levels of payload, an ordinary message.
    const sent = await post({ threadId, message: { parts: [text("hello")] }, clientData: nested(63, 1) });
    expect(sent.status).toBe(200);
    expect(calls).toContain("threads.send");
  });

  it("holds ids, parts and client tools to the router's defaults, and no id past 191 characters", async () => {
    expect(DEFAULT_PAI_CHAT_LIMITS).toEqual({
      maxIdLength: DEFAULT_PAI_ROUTER_LIMITS.maxIdLength,
      maxMessageParts: DEFAULT_PAI_ROUTER_LIMITS.maxMessageParts,
      maxClientTools: DEFAULT_PAI_ROUTER_LIMITS.maxClientTools,
      maxJsonSize: DEFAULT_PAI_ROUTER_LIMITS.maxJsonSize,
      maxJsonDepth: DEFAULT_PAI_ROUTER_LIMITS.maxJsonDepth,
    });
    const { post, calls, service } = await handlerHost();
    const { threadId } = await service.threads.create({ identity: ada });
    const message = { parts: [text("hi")] };
    const refusals: Array<[object, string]> = [
      [
        { threadId, message, clientTools: Array.from({ length: 33 }, (_, i) => tool(`t${i}`)) },
        "clientTools",
      ],
      [{ threadId, message: { parts: Array.from({ length: 65 }, () => text("hi")) } }, "message.parts"],
      [{ threadId, message: { ...message, id: "m".repeat(192) } }, "message.id"],
      [{ threadId: "t".repeat(192), message }, "threadId"],
      [
        { threadId, answers: [{ type: "tool-output", toolCallId: "c".repeat(192), output: 1 }] },
        "answers.0.toolCallId",
      ],
      [
        { threadId, answers: [{ type: "approval", approvalId: "a".repeat(192), approved: true }] },
        "answers.0.approvalId",
      ],
      [
        { threadId, answers: [{ type: "action", actionId: "a".repeat(192), kind: "cancel" }] },
        "answers.0.actionId",
      ],
      [
        {
          threadId,
          answers: [{ type: "action", actionId: "a", kind: "cancel", idempotencyKey: "k".repeat(192) }],
        },
        "answers.0.idempotencyKey",
      ],
    ];
    for (const [body, path] of refusals) {
      const refused = await post(body);
      expect(refused.status, path).toBe(400);
      expect(refused.error?.message, path).toContain(`${path}: Too big`);
    }
    // Ids are exact, as the router takes them.
    const padded = await post({
      threadId,
      answers: [{ type: "tool-output", toolCallId: "call-color ", output: 1 }],
    });
    expect(padded.status).toBe(400);
    expect(padded.error?.message).toContain("answers.0.toolCallId: must not start or end with whitespace.");
    expect(calls).toEqual([]);

    const sent = await post({
      threadId,
      message: { id: "m".repeat(191), parts: Array.from({ length: 64 }, () => text("hi")) },
      clientTools: Array.from({ length: 32 }, (_, i) => tool(`t${i}`)),
    });
    expect(sent.status).toBe(200);
    const stored = await service.threads.get({ identity: ada, threadId });
    expect(stored.messages[0]?.messageId).toBe("m".repeat(191));
  });

  it("takes its bounds from createPaiChatHandler({ limits })", async () => {
    const pai = newPai();
    const handler = createPaiChatHandler({
      pai,
      identity: () => ada,
      limits: { maxClientTools: 2, maxJsonDepth: 3 },
    });
    const url = await listen(createServer(toNodeListener(handler)));
    const { threadId } = await pai.service.threads.create({ identity: ada });
    const post = (body: object) =>
      fetch(url, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify(body),
      });
    const message = { parts: [text("hi")] };
    expect((await post({ threadId, message, clientTools: [tool("a"), tool("b"), tool("c")] })).status).toBe(
      400,
    );
    expect((await post({ threadId, message, clientData: nested(4, 1) })).status).toBe(400);
    expect((await post({ threadId, message, clientData: nested(3, 1) })).status).toBe(200);
  });
});

describe("the fetch chat handler answers every PAI error code with its HTTP status (real HTTP)", () => {
  it("answers PAYLOAD_TOO_LARGE with 413: a client tool snapshot over the service's 64 KiB", async () => {
    const { post, service } = await handlerHost();
    const { threadId } = await service.threads.create({ identity: ada });
    const refused = await post({
      threadId,
      message: { parts: [text("hi")] },
      clientTools: [tool("big", { description: "x".repeat(70_000) })],
    });
    expect(refused.error?.code).toBe("PAYLOAD_TOO_LARGE");
    expect(refused.status).toBe(413);
  });

  it("maps each code as PAI_ERROR_HTTP_STATUS does (UNSUPPORTED_ENTRY: 400), never a private table", async () => {
    let code: PaiErrorCode = "INVALID_INPUT";
    const pai = newPai();
    const failing: ChatPai<{ user: string }> = {
      agents: pai.agents,
      service: {
        ...pai.service,
        threads: {
          ...pai.service.threads,
          get: async () => {
            throw new PaiError(code, `failed with ${code}`);
          },
        },
      },
    };
    const { url } = await handlerHost(failing);
    for (const each of Object.keys(PAI_ERROR_CODES) as PaiErrorCode[]) {
      code = each;
      const response = await fetch(`${url}?threadId=t1`);
      const body = (await response.json()) as { error: { code: string } };
      expect(body.error.code).toBe(each);
      expect(response.status, each).toBe(PAI_ERROR_HTTP_STATUS[each]);
    }
    code = "UNSUPPORTED_ENTRY";
    expect((await fetch(`${url}?threadId=t1`)).status).toBe(400);
    code = "PAYLOAD_TOO_LARGE";
    expect((await fetch(`${url}?threadId=t1`)).status).toBe(413);
  });
});

/** A host serving the chat protocol over tRPC, with its SSE read raw. */
async function trpcHost() {
  const pai = newPai();
  const t = initTRPC.context<{ user: { user: string } }>().create({
    transformer: guardTransformer(superjson),
    errorFormatter: ({ shape, error }) => ({ ...shape, data: { ...shape.data, pai: paiErrorData(error) } }),
  });
  const authed = t.procedure.use(({ ctx, next }) => {
    if (!ctx.user) throw new TRPCError({ code: "UNAUTHORIZED" });
    return next({ ctx });
  });
  const router = t.router({
    pai: createPaiRouter({
      procedure: authed,
      service: pai.service,
      identity: (ctx) => ctx.user,
      chat: createChatStreams(pai),
    }),
  });
  const url = await listen(createHTTPServer({ router, createContext: () => ({ user: ada }) }));
  type ErrorShape = SubscriptionError;
  const subscribe = (path: string, input: unknown) => subscriptionError(url, path, input);
  /** A mutation's error, or null when it succeeds. */
  const mutate = async (path: string, input: unknown): Promise<ErrorShape | null> => {
    const response = await fetch(`${url}/${path}`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(superjson.serialize(input)),
    });
    const { error } = (await response.json()) as { error?: Parameters<typeof superjson.deserialize>[0] };
    return error ? superjson.deserialize<ErrorShape>(error) : null;
  };
  return { pai, subscribe, mutate };
}

describe("chat.send over tRPC is held to the router's limits as threads.send is (real HTTP, SSE)", () => {
  it("refuses 100 client tools (max 32) with the 400 threads.send gives, and stores nothing", async () => {
    const { pai, subscribe, mutate } = await trpcHost();
    const { threadId } = await pai.service.threads.create({ identity: ada });
    const clientTools = Array.from({ length: 100 }, (_, i) => tool(`t${i}`));
    const viaThreads = await mutate("pai.threads.send", { threadId, message: { text: "hi" }, clientTools });
    const viaChat = await subscribe("pai.chat.send", {
      threadId,
      message: { parts: [text("hi")] },
      clientTools,
    });
    expect(viaThreads?.data).toMatchObject({
      httpStatus: 400,
      code: "BAD_REQUEST",
      pai: { code: "INVALID_INPUT" },
    });
    expect(viaChat?.data).toMatchObject({
      httpStatus: 400,
      code: "BAD_REQUEST",
      pai: { code: "INVALID_INPUT" },
    });
    expect(viaChat?.data.pai.issues?.map((issue) => issue.path)).toEqual(
      viaThreads?.data.pai.issues?.map((issue) => issue.path),
    );
    expect(viaChat?.data.pai.issues?.[0]?.path).toEqual(["clientTools"]);
    const stored = await pai.service.threads.get({ identity: ada, threadId });
    expect(stored.runs).toEqual([]);
    expect(stored.messages).toEqual([]);
  });

  it("refuses ids past maxIdLength (200) and message ids past 191, parts past maxMessageParts", async () => {
    const { pai, subscribe } = await trpcHost();
    const { threadId } = await pai.service.threads.create({ identity: ada });
    const parts = [text("hi")];
    const cases: Array<[object, Array<string | number>]> = [
      [{ threadId, message: { id: "m".repeat(192), parts } }, ["message", "id"]],
      [{ threadId, message: { id: "m".repeat(500), parts } }, ["message", "id"]],
      [{ threadId, message: { parts: Array.from({ length: 65 }, () => text("hi")) } }, ["message", "parts"]],
      [
        {
          threadId,
          answers: [{ type: "action", actionId: "a", kind: "cancel", idempotencyKey: "k".repeat(201) }],
        },
        ["answers", 0, "idempotencyKey"],
      ],
    ];
    for (const [input, path] of cases) {
      const error = await subscribe("pai.chat.send", input);
      expect(error?.data, path.join(".")).toMatchObject({ httpStatus: 400, pai: { code: "INVALID_INPUT" } });
      expect(error?.data.pai.issues?.[0]?.path, path.join(".")).toEqual(path);
    }
    expect((await pai.service.threads.get({ identity: ada, threadId })).messages).toEqual([]);
    // At the bounds the message is sent.
    expect(
      await subscribe("pai.chat.send", { threadId, message: { id: "m".repeat(191), parts } }),
    ).toBeNull();
    expect((await pai.service.threads.get({ identity: ada, threadId })).messages[0]?.messageId).toBe(
      "m".repeat(191),
    );
  });
});
