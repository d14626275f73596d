// A host app that embeds PAI in its own tRPC API: its own tRPC instance, context and auth
// middleware, SQLite through node:sqlite, and a scripted model. Prints `{"listening":url}`.
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { DatabaseSync } from "node:sqlite";
import { createPai, getErrorMessage } from "@pai/core";
import { scriptedModel } from "@pai/core/testing";
import { createNodeSqliteDialect, kyselyStorage, migrateToLatest } from "@pai/storage-kysely";
import { createPaiRouter, guardTransformer, paiErrorData } from "@pai/transport-trpc";
import { initTRPC, TRPCError } from "@trpc/server";
import { createHTTPHandler } from "@trpc/server/adapters/standalone";
import { Kysely } from "kysely";
import superjson from "superjson";
import { agent } from "./agent.js";

export type User = { id: string; orgId: string };
type Context = { user: User | null };

// The host's own sign-in, reduced to fixed bearer tokens.
const USERS: Record<string, User> = { "token-ana": { id: "ana", orgId: "acme" } };

function userFrom(authorization: string | undefined): User | null {
  if (!authorization?.startsWith("Bearer ")) return null;
  return USERS[authorization.slice("Bearer ".length)] ?? null;
}

// Calls the approval tool for a user message, then confirms once the tool has answered.
const model = scriptedModel((call) =>
  call.prompt.at(-1)?.role === "tool"
    ? { text: "Approved: the Q3 report went out." }
    : {
        text: "I need your approval first.",
        toolCalls: [{ toolName: "requestApproval", input: { summary: "Send the Q3 report to the board" } }],
      },
);

const database = new DatabaseSync(process.env.HOST_DB_PATH ?? ":memory:");
const db = new Kysely<any>({ dialect: createNodeSqliteDialect(database) });
await migrateToLatest(db);

const pai = createPai({
  agents: { main: agent },
  storage: kyselyStorage({ db }),
  model,
  scope: (user: User) => ({ scopeKey: user.orgId, userKey: user.id }),
  onRuntimeError: (report) => console.error(`[pai ${report.phase}] ${getErrorMessage(report.error)}`),
});

const t = initTRPC.context<Context>().create({
  transformer: guardTransformer(superjson),
  isDev: false,
  errorFormatter: ({ shape, error }) => ({ ...shape, data: { ...shape.data, pai: paiErrorData(error) } }),
});

const authed = t.procedure.use(({ ctx, next }) => {
  if (!ctx.user) throw new TRPCError({ code: "UNAUTHORIZED" });
  return next({ ctx: { user: ctx.user } });
});

export const appRouter = t.router({
  health: t.procedure.query(() => ({ ok: true as const })),
  me: authed.query(({ ctx }) => ctx.user),
  pai: createPaiRouter({ procedure: authed, service: pai.service, identity: (ctx) => ctx.user }),
});
export type AppRouter = typeof appRouter;

const handler = createHTTPHandler({
  router: appRouter,
  maxBodySize: 1_048_576,
  createContext: ({ req }) => ({ user: userFrom(req.headers.authorization) }),
});
const server = createServer((req, res) => void handler(req, res));
server.listen(Number(process.env.PORT ?? 0), "127.0.0.1", () => {
  const { port } = server.address() as AddressInfo;
  console.log(JSON.stringify({ listening: `http://127.0.0.1:${port}` }));
});

process.on("SIGTERM", () => {
  server.close();
  server.closeAllConnections();
  void pai
    .close()
    .then(() => db.destroy())
    .then(() => process.exit(0));
});
