// A CommonJS host (Express- or NestJS-style backends often are): the folder's package.json says
// "type": "commonjs", so TypeScript emits `require` calls and Node 22 loads PAI's ES modules
// through require(esm). It mounts PAI's router on its own tRPC instance and runs the approval
// flow through a server-side caller, then prints one JSON line with what it saw.
import { DatabaseSync } from "node:sqlite";
import { createPaiClient } from "@pai/client";
import { createPai, defineAgent, defineTool } from "@pai/core";
import { scriptedModel } from "@pai/core/testing";
import { createNodeSqliteDialect, kyselyStorage, migrateToLatest } from "@pai/storage-kysely";
import { createPaiRouter } from "@pai/transport-trpc";
import { createTrpcTransport } from "@pai/transport-trpc/client";
import { initTRPC, type TRPCError } from "@trpc/server";
import { Kysely } from "kysely";
import { z } from "zod";

type User = { id: string; orgId: string };

const requestApproval = defineTool({
  id: "cjs-host.request-approval.v1",
  description: "Ask before acting",
  inputSchema: z.object({ summary: z.string() }),
  outputSchema: z.object({ approved: z.boolean() }),
  suspend: {
    approval: {
      suspendSchema: z.object({ prompt: z.string() }),
      resumeSchema: z.object({ approved: z.boolean() }),
    },
  },
  execute: (ctx) =>
    ctx.entry.type === "initial" ? ctx.suspend("approval", { prompt: ctx.input.summary }) : ctx.entry.resume,
});

const agent = defineAgent({ name: "assistant", tools: { requestApproval } });

const model = scriptedModel((call) =>
  call.prompt.at(-1)?.role === "tool"
    ? { text: "Done." }
    : {
        text: "Approval first.",
        toolCalls: [{ toolName: "requestApproval", input: { summary: "Ship it" } }],
      },
);

async function main() {
  const db = new Kysely<any>({ dialect: createNodeSqliteDialect(new DatabaseSync(":memory:")) });
  await migrateToLatest(db);
  const pai = createPai({
    agents: { main: agent },
    storage: kyselyStorage({ db }),
    model,
    scope: (user: User) => ({ scopeKey: user.orgId, userKey: user.id }),
  });
  const t = initTRPC.context<{ user: User }>().create();
  const router = t.router({
    pai: createPaiRouter({ procedure: t.procedure, service: pai.service, identity: (ctx) => ctx.user }),
  });
  const caller = t.createCallerFactory(router)({ user: { id: "ana", orgId: "acme" } });

  const { threadId } = await caller.pai.threads.create({});
  await caller.pai.threads.send({ threadId, message: { text: "ship?" } });
  await pai.waitForIdle(threadId);
  const waiting = await caller.pai.threads.get({ threadId });
  const action = waiting.pending[0];
  if (!action) throw new Error("cjs host: no pending action");
  await caller.pai.actions.submit({
    threadId,
    actionId: action.ref.actionId,
    name: "requestApproval.approval",
    payload: { approved: true },
  });
  await pai.waitForIdle(threadId);
  const done = await caller.pai.threads.get({ threadId });
  // An error from PAI's ES module reaches the host's CommonJS tRPC with its code. It is the ES
  // build's TRPCError, so `instanceof` against the CommonJS class is false; tRPC itself goes by
  // the error's name, and so should host code that inspects it.
  const missing = await caller.pai.threads.get({ threadId: "thr_missing" }).then(
    () => "found",
    (error: unknown) =>
      error instanceof Error && error.name === "TRPCError" ? (error as TRPCError).code : "other",
  );
  // The browser-side entries load too (no network is used: the client is only constructed).
  const client = createPaiClient<typeof agent>({
    transport: createTrpcTransport({ url: "http://127.0.0.1:1" }),
  });
  console.log(
    JSON.stringify({
      moduleKind: typeof require === "function" && typeof module === "object" ? "commonjs" : "esm",
      pending: action.name,
      runStatus: done.run?.status ?? null,
      pendingAfter: done.pending.length,
      missing,
      client: typeof client.thread,
    }),
  );
  await pai.close();
  await db.destroy();
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
