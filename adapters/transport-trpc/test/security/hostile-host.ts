import type { AddressInfo, Socket } from "node:net";
import type { PaiService } from "@pai/core";
import { initTRPC, TRPCError } from "@trpc/server";
import { createHTTPServer } from "@trpc/server/adapters/standalone";
import superjson from "superjson";
import { createPaiRouter, guardTransformer, paiErrorData } from "../../src/index.js";

/**
 * The host app of the hostile-tenant suite, configured as in production: its own tRPC instance
 * with superjson, `isDev: false` (tRPC then leaves stacks out of error shapes whatever NODE_ENV
 * is), bearer-token auth, and PAI mounted under `pai`. Scope keys may contain `-`.
 */

export type HostUser = { userId: string; scopeKey: string };
type HostContext = { user: HostUser | null };

const t = initTRPC.context<HostContext>().create({
  isDev: false,
  transformer: guardTransformer(superjson),
  errorFormatter: ({ shape, error }) => ({ ...shape, data: { ...shape.data, pai: paiErrorData(error) } }),
  sse: { ping: { enabled: true, intervalMs: 1_000 }, client: { reconnectAfterInactivityMs: 3_000 } },
});

const authed = t.procedure.use(({ ctx, next }) => {
  if (!ctx.user) throw new TRPCError({ code: "UNAUTHORIZED", message: "Sign in first." });
  return next({ ctx: { user: ctx.user } });
});

function createHostileHostRouter(service: PaiService, onInternalError: (error: unknown) => void) {
  return t.router({
    pai: createPaiRouter({
      procedure: authed,
      service,
      identity: (ctx) => ({ userId: ctx.user.userId, scopeKey: ctx.user.scopeKey }),
      onInternalError,
    }),
  });
}

export type HostileHostRouter = ReturnType<typeof createHostileHostRouter>;

function userFromAuthorization(header: string | undefined): HostUser | null {
  const match = /^Bearer ([\w-]+):([\w-]+)$/.exec(header ?? "");
  return match ? { userId: match[1], scopeKey: match[2] } : null;
}

export type HostileHost = {
  url: string;
  /** Unexpected errors the router reported (`onInternalError`), oldest first. */
  internalErrors: unknown[];
  close(): Promise<void>;
};

/** Serves the host app on 127.0.0.1, port 0. */
export async function startHostileHost(service: PaiService): Promise<HostileHost> {
  const internalErrors: unknown[] = [];
  const server = createHTTPServer({
    router: createHostileHostRouter(service, (error) => internalErrors.push(error)),
    createContext: ({ req }) => ({ user: userFromAuthorization(req.headers.authorization) }),
  });
  const sockets = new Set<Socket>();
  server.on("connection", (socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    internalErrors,
    async close() {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
