import { createPaiClient, type PaiClient, type PaiTransport } from "@pai/client";
import {
  type ActionResult,
  createPai,
  defineAgent,
  defineTool,
  type JsonObject,
  type ListResult,
  type WatchEvent,
} from "@pai/core";
import type { ClientThreadRow, ClientThreadSnapshot, ClientThreadView } from "@pai/core/protocol";
import { createTRPCClient, httpBatchLink, type inferRouterClient } from "@trpc/client";
import { type inferRouterInputs, type inferRouterOutputs, initTRPC } from "@trpc/server";
import superjson from "superjson";
import { describe, expectTypeOf, it } from "vitest";
import { z } from "zod";
import { trpcTransport } from "../src/client.js";
import {
  type ClientActionResult,
  type ClientCreatedThread,
  type ClientSendResult,
  createPaiRouter,
} from "../src/index.js";
import type { HostRouter } from "./host-app.js";

type Outputs = inferRouterOutputs<HostRouter>;
type Inputs = inferRouterInputs<HostRouter>;

describe("types of the PAI procedures in a host router", () => {
  it("infers procedure outputs in the client", () => {
    expectTypeOf<Outputs["pai"]["threads"]["get"]>().toEqualTypeOf<ClientThreadView>();
    expectTypeOf<Outputs["pai"]["threads"]["snapshot"]>().toEqualTypeOf<ClientThreadSnapshot>();
    expectTypeOf<Outputs["pai"]["threads"]["create"]>().toEqualTypeOf<ClientCreatedThread>();
    expectTypeOf<Outputs["pai"]["actions"]["submit"]>().toEqualTypeOf<ClientActionResult>();
    // A call made with waitMs answers the settled thread as the client view, never the stored rows.
    expectTypeOf<NonNullable<Outputs["pai"]["threads"]["send"]["settled"]>>().toEqualTypeOf<{
      done: boolean;
      view: ClientThreadView;
    }>();
    expectTypeOf<
      NonNullable<Outputs["pai"]["actions"]["fail"]["settled"]>["view"]
    >().toEqualTypeOf<ClientThreadView>();
    expectTypeOf<Outputs["pai"]["threads"]["list"]["nextCursor"]>().toEqualTypeOf<string | null>();
  });

  it("types procedure inputs from the Zod schemas", () => {
    expectTypeOf<Inputs["pai"]["threads"]["get"]>().toEqualTypeOf<{ threadId: string }>();
    expectTypeOf<Inputs["pai"]["actions"]["fail"]["error"]>().toEqualTypeOf<string | { message: string }>();
    expectTypeOf<Inputs["pai"]["threads"]["watch"]>().toHaveProperty("lastEventId");
    expectTypeOf<Inputs["pai"]["threads"]["send"]["waitMs"]>().toEqualTypeOf<number | undefined>();
    expectTypeOf<Inputs["pai"]["actions"]["submit"]["waitMs"]>().toEqualTypeOf<number | undefined>();
    // @ts-expect-error a thread id is a string
    const wrong: Inputs["pai"]["threads"]["get"] = { threadId: 1 };
    void wrong;
  });

  it("keeps the transport surface of the router in sync with PaiTransport", () => {
    type SendInput = Parameters<PaiTransport["threads"]["send"]>[0];
    expectTypeOf<SendInput>().toExtend<Inputs["pai"]["threads"]["send"]>();
    type SubmitInput = Parameters<PaiTransport["actions"]["submit"]>[0];
    expectTypeOf<SubmitInput>().toExtend<Inputs["pai"]["actions"]["submit"]>();
    expectTypeOf<PaiClient["transport"]["threads"]["watch"]>().returns.toEqualTypeOf<
      AsyncIterable<WatchEvent>
    >();
  });
});

describe("types through @trpc/client", () => {
  const trpc = createTRPCClient<HostRouter>({
    links: [httpBatchLink({ url: "http://127.0.0.1:1", transformer: superjson })],
  });

  it("infers procedure outputs from the router type in the tRPC client", () => {
    expectTypeOf(trpc.pai.threads.get.query).returns.resolves.toEqualTypeOf<ClientThreadView>();
    expectTypeOf(trpc.pai.threads.create.mutate).returns.resolves.toEqualTypeOf<ClientCreatedThread>();
    expectTypeOf(trpc.pai.threads.send.mutate).returns.resolves.toEqualTypeOf<ClientSendResult>();
    expectTypeOf(trpc.pai.threads.list.query).returns.resolves.toEqualTypeOf<ListResult<ClientThreadRow>>();
    expectTypeOf(trpc.pai.actions.submit.mutate).returns.resolves.toEqualTypeOf<ClientActionResult>();
    expectTypeOf(trpc.pai.actions.cancel.mutate).returns.resolves.toEqualTypeOf<ClientActionResult>();
    expectTypeOf(trpc.pai.manifest.query).returns.resolves.toEqualTypeOf<JsonObject>();
    type Client = inferRouterClient<HostRouter>;
    expectTypeOf<Awaited<ReturnType<Client["pai"]["threads"]["cancel"]["mutate"]>>>().toEqualTypeOf<{
      version: number;
    }>();
    // The host's own procedures sit next to PAI's, with superjson keeping their Date.
    expectTypeOf(trpc.health.query).returns.resolves.toEqualTypeOf<{ ok: boolean; at: Date }>();
  });

  it("checks procedure inputs in the tRPC client", () => {
    // @ts-expect-error threadId is required
    void trpc.pai.threads.get.query({});
    // @ts-expect-error an action error is a string or { message }
    void trpc.pai.actions.fail.mutate({ threadId: "t", actionId: "a", error: 1 });
  });

  it("types a PAI client over the tRPC transport from the agent", async () => {
    const approve = defineTool({
      id: "types.approve",
      description: "Wait for approval",
      inputSchema: z.object({ summary: z.string() }),
      outputSchema: z.object({ ok: z.boolean() }),
      suspend: {
        approval: {
          suspendSchema: z.object({ prompt: z.string() }),
          resumeSchema: z.object({ approved: z.boolean() }),
        },
      },
      execute: async (ctx) =>
        ctx.entry.type === "initial"
          ? ctx.suspend("approval", { prompt: ctx.input.summary })
          : { ok: ctx.entry.resume.approved },
    });
    const agent = defineAgent({ name: "main", tools: { approve } });
    const client = createPaiClient<typeof agent>({ transport: trpcTransport(trpc) });
    const thread = client.thread("t");
    const action = thread.action("approve.approval");
    expectTypeOf(action?.input).toEqualTypeOf<{ prompt: string } | undefined>();
    await action?.submit({ approved: true });
    // @ts-expect-error the resume schema wants { approved: boolean }
    await action?.submit({ ok: true });
    if (action) expectTypeOf(action.submit).returns.resolves.toEqualTypeOf<ActionResult>();
  });
});

describe("typed raw procedures: a plain @trpc/client on a router built from a typed runtime", () => {
  const approve = defineTool({
    id: "types.raw.approve",
    description: "Wait for approval",
    inputSchema: z.object({ summary: z.string() }),
    outputSchema: z.object({ ok: z.boolean() }),
    suspend: {
      approval: {
        suspendSchema: z.object({ prompt: z.string() }),
        resumeSchema: z.object({ approved: z.boolean(), comment: z.string().optional() }),
      },
    },
    execute: async (ctx) =>
      ctx.entry.type === "initial"
        ? ctx.suspend("approval", { prompt: ctx.input.summary })
        : { ok: ctx.entry.resume.approved },
  });
  const pickColor = defineTool({
    id: "types.raw.pick-color",
    description: "The user picks a color in the browser",
    inputSchema: z.object({}),
    outputSchema: z.object({ color: z.enum(["red", "green"]) }),
  });
  const agent = defineAgent({ name: "main", tools: { approve, pickColor } });
  const pai = createPai({
    agents: { main: agent },
    storage: {} as never,
    scope: (user: { id: string; org: string }) => ({ scopeKey: user.org, userKey: user.id }),
  });
  const t = initTRPC.context<{ user: { id: string; org: string } }>().create({ transformer: superjson });
  const router = t.router({
    pai: createPaiRouter({ procedure: t.procedure, service: pai.service, identity: (ctx) => ctx.user }),
  });
  const trpc = createTRPCClient<typeof router>({
    links: [httpBatchLink({ url: "http://127.0.0.1:1", transformer: superjson })],
  });
  const ids = { threadId: "t", actionId: "a" };

  it("types the payload of actions.submit by the action's name", () => {
    void trpc.pai.actions.submit.mutate({ ...ids, name: "approve.approval", payload: { approved: true } });
    void trpc.pai.actions.submit.mutate({ ...ids, name: "pickColor.output", payload: { color: "red" } });
    // @ts-expect-error the approval's resume schema wants { approved: boolean }
    void trpc.pai.actions.submit.mutate({ ...ids, name: "approve.approval", payload: { ok: true } });
    // @ts-expect-error "blue" is not a color this tool accepts
    void trpc.pai.actions.submit.mutate({ ...ids, name: "pickColor.output", payload: { color: "blue" } });
    // @ts-expect-error no action of the agent has this name
    void trpc.pai.actions.submit.mutate({ ...ids, name: "approve.other", payload: {} });
    // @ts-expect-error without a name the payload cannot be checked, so typed clients must name it
    void trpc.pai.actions.submit.mutate({ ...ids, payload: { approved: true } });
    // An action outside the contract (a frontend-defined client tool) is answered explicitly untyped.
    void trpc.pai.actions.submit.mutate({
      ...ids,
      untyped: true,
      name: "client.selection.output",
      payload: 1,
    });
  });

  it("narrows threads.get's pending actions by name, and a narrowed name is what submit takes", async () => {
    type Pending = inferRouterOutputs<typeof router>["pai"]["threads"]["get"]["pending"][number];
    expectTypeOf<Pending["name"]>().toEqualTypeOf<"approve.approval" | "pickColor.output">();
    const view = await trpc.pai.threads.get.query({ threadId: "t" });
    const action = view.pending[0];
    if (action?.name === "approve.approval") {
      expectTypeOf(action.input).toEqualTypeOf<{ prompt: string }>();
      void trpc.pai.actions.submit.mutate({ ...ids, name: action.name, payload: { approved: true } });
      // @ts-expect-error the narrowed name still types the payload
      void trpc.pai.actions.submit.mutate({ ...ids, name: action.name, payload: { color: "red" } });
    }
    if (action?.name === "pickColor.output") {
      expectTypeOf(action.input).toEqualTypeOf<Record<string, never>>();
      void trpc.pai.actions.submit.mutate({ ...ids, name: action.name, payload: { color: "green" } });
    }
    // The rest of the pending action is the plain data every client gets.
    expectTypeOf<Pending["ref"]["actionId"]>().toEqualTypeOf<string>();
    expectTypeOf<Pending["deadline"]>().toEqualTypeOf<ClientThreadView["pending"][number]["deadline"]>();
  });

  it("types the view of threads.watch the same way", () => {
    type Item = Extract<
      inferRouterOutputs<typeof router>["pai"]["threads"]["watch"] extends AsyncIterable<infer T> ? T : never,
      { type: "state" }
    >;
    expectTypeOf<Item["view"]["pending"][number]["name"]>().toEqualTypeOf<
      "approve.approval" | "pickColor.output"
    >();
  });

  it("returns client views without storage rows or scope keys", () => {
    type Outputs = inferRouterOutputs<typeof router>;
    expectTypeOf<Outputs["pai"]["threads"]["get"]>().toExtend<ClientThreadView>();
    expectTypeOf<Outputs["pai"]["threads"]["get"]>().not.toHaveProperty("actions");
    expectTypeOf<Outputs["pai"]["threads"]["get"]["thread"]>().not.toHaveProperty("scopeKey");
    expectTypeOf<Outputs["pai"]["actions"]["submit"]["action"]>().not.toHaveProperty("scopeKey");
    expectTypeOf<Outputs["pai"]["threads"]["list"]["items"][number]>().not.toHaveProperty("scopeKey");
  });
});
