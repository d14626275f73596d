import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { createPai, getErrorMessage } from "@pai/core";
import { kyselyStorage } from "@pai/storage-kysely";
import { createPaiRouter, guardTransformer, paiErrorData } from "@pai/transport-trpc";
import { initTRPC, TRPCError } from "@trpc/server";
import { createHTTPHandler } from "@trpc/server/adapters/standalone";
import type { LanguageModel } from "ai";
import type { Kysely } from "kysely";
import superjson from "superjson";
import { agent } from "./agent.ts";

/** The signed-in user. Bring your own: a session, a JWT, an API key... */
export type User = { id: string };

const USER_ID = /^[\w.@-]{1,64}$/;

/**
 * The user of a request. This starter has no sign-in: every request is the user "demo", or
 * the one an `x-user` header names (to try several users). Replace it with your session or token
 * check and return null for anonymous requests: the `authed` procedure refuses them before PAI runs.
 */
export function userFrom(req: IncomingMessage): User | null {
  const header = req.headers["x-user"];
  const id = (Array.isArray(header) ? header[0] : header) ?? "demo";
  return USER_ID.test(id) ? { id } : null;
}

export type AppOptions = {
  db: Kysely<any>;
  model: LanguageModel;
  /** 0 picks a free port. */
  port: number;
  host?: string;
  /** Serves everything outside /api: the built page, or Vite's dev server. */
  web?: (req: IncomingMessage, res: ServerResponse) => void;
  /** Development: tRPC puts stack traces into error responses. */
  dev?: boolean;
  log?: (line: string) => void;
};

function createAppPai(options: AppOptions) {
  const log = options.log ?? console.error;
  return createPai({
    agents: { main: agent },
    storage: kyselyStorage({ db: options.db }),
    model: options.model,
    // The tenant of every request: here each user has their own threads. Use your org or team
    // id as scopeKey to share threads inside it.
    scope: (user: User) => ({ scopeKey: `user:${user.id}`, userKey: user.id }),
    onRuntimeError: (report) =>
      log(`[pai ${report.phase}] ${report.correlationId ?? ""} ${getErrorMessage(report.error)}`),
  });
}

type AppPai = ReturnType<typeof createAppPai>;

function createAppRouter(pai: AppPai, options: AppOptions) {
  const t = initTRPC.context<{ user: User | null }>().create({
    // Refuses __proto__/constructor/prototype keys and over-deep JSON before superjson runs.
    transformer: guardTransformer(superjson),
    isDev: options.dev === true,
    // PAI's error code and validation issues reach the client as `data.pai`.
    errorFormatter: ({ shape, error }) => ({ ...shape, data: { ...shape.data, pai: paiErrorData(error) } }),
    // Keeps the live thread streams (SSE) open through proxies.
    sse: { ping: { enabled: true, intervalMs: 15_000 } },
  });
  const authed = t.procedure.use(({ ctx, next }) => {
    if (!ctx.user) throw new TRPCError({ code: "UNAUTHORIZED" });
    return next({ ctx: { user: ctx.user } });
  });
  return t.router({
    // Your own procedures live next to PAI's.
    me: authed.query(({ ctx }) => ctx.user),
    pai: createPaiRouter({ procedure: authed, service: pai.service, identity: (ctx) => ctx.user }),
  });
}

/** The API's type, for a typed tRPC client of the app's own procedures. */
export type AppRouter = ReturnType<typeof createAppRouter>;

export type App = { url: string; pai: AppPai; close(): Promise<void> };

/**
 * Starts the app: PAI on the given database and model, the tRPC API at /api/trpc (PAI under
 * `pai.*`), a health check at /api/health, and `web` for everything else.
 */
export async function startApp(options: AppOptions): Promise<App> {
  const pai = createAppPai(options);
  // Runs that a stopped or crashed process left behind continue here.
  await pai.recover();
  const stopRecovery = pai.startRecovery({ intervalMs: 10_000 });

  const trpc = createHTTPHandler({
    router: createAppRouter(pai, options),
    basePath: "/api/trpc/",
    maxBodySize: 2 * 1_048_576,
    createContext: ({ req }) => ({ user: userFrom(req) }),
  });
  const server = createServer((req, res) => {
    const path = new URL(req.url ?? "/", "http://localhost").pathname;
    if (path.startsWith("/api/trpc/")) return void trpc(req, res);
    if (path === "/api/health") {
      res.writeHead(200, { "content-type": "application/json", "cache-control": "no-store" });
      res.end(JSON.stringify({ ok: true }));
      return;
    }
    if (options.web && !path.startsWith("/api/")) return options.web(req, res);
    res.writeHead(404, { "content-type": "text/plain" }).end("Not found");
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port, options.host ?? "127.0.0.1", () => resolve());
  });
  const address = server.address() as AddressInfo;
  const host = address.address.includes(":") ? `[${address.address}]` : address.address;

  let closing: Promise<void> | undefined;
  return {
    url: `http://${host}:${address.port}`,
    pai,
    close: () => {
      closing ??= (async () => {
        const closed = new Promise<void>((resolve) => server.close(() => resolve()));
        // Live thread streams stay open until their connections go.
        server.closeAllConnections();
        await closed;
        stopRecovery();
        await pai.close();
      })();
      return closing;
    },
  };
}
