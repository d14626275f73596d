import { createPaiClient, type PaiClient, type PaiTransport } from "@pai/client";
import {
  type ActionResult,
  defineAgent,
  defineTool,
  type JsonObject,
  type ListResult,
  type SendResult,
  type ThreadRow,
  type ThreadSnapshot,
  type WatchEvent,
} from "@pai/core";
import { createTRPCClient, httpBatchLink, type inferRouterClient } from "@trpc/client";
import type { inferRouterInputs, inferRouterOutputs } from "@trpc/server";
import superjson from "superjson";
import { describe, expectTypeOf, it } from "vitest";
import { z } from "zod";
import { trpcTransport } from "../src/client.js";
import type { HostRouter } from "./host-app.js";

type Outputs = inferRouterOutputs<HostRouter>;
type Inputs = inferRouterInputs<HostRouter>;

describe("types of the PAI procedures in a host router", () => {
  it("infers procedure outputs in the client", () => {
    expectTypeOf<Outputs["pai"]["threads"]["get"]>().toEqualTypeOf<ThreadSnapshot>();
    expectTypeOf<Outputs["pai"]["threads"]["create"]>().toEqualTypeOf<ThreadRow>();
    expectTypeOf<Outputs["pai"]["actions"]["submit"]>().toEqualTypeOf<ActionResult>();
    expectTypeOf<Outputs["pai"]["threads"]["list"]["nextCursor"]>().toEqualTypeOf<string | null>();
  });

  it("types procedure inputs from the Zod schemas", () => {
    expectTypeOf<Inputs["pai"]["threads"]["get"]>().toEqualTypeOf<{ threadId: string }>();
    expectTypeOf<Inputs["pai"]["actions"]["fail"]["error"]>().toEqualTypeOf<string | { message: string }>();
    expectTypeOf<Inputs["pai"]["threads"]["watch"]>().toHaveProperty("lastEventId");
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
    expectTypeOf(trpc.pai.threads.get.query).returns.resolves.toEqualTypeOf<ThreadSnapshot>();
    expectTypeOf(trpc.pai.threads.create.mutate).returns.resolves.toEqualTypeOf<ThreadRow>();
    expectTypeOf(trpc.pai.threads.send.mutate).returns.resolves.toEqualTypeOf<SendResult>();
    expectTypeOf(trpc.pai.threads.list.query).returns.resolves.toEqualTypeOf<ListResult<ThreadRow>>();
    expectTypeOf(trpc.pai.actions.submit.mutate).returns.resolves.toEqualTypeOf<ActionResult>();
    expectTypeOf(trpc.pai.actions.cancel.mutate).returns.resolves.toEqualTypeOf<ActionResult>();
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
