import type { AddressInfo, Socket } from "node:net";
import type { PaiService } from "@pai/core";
import { createTestRuntime, type TestRuntime, type TestRuntimeOptions } from "@pai/core/testing";
import { memoryStorage } from "@pai/storage-memory";
import { createTRPCUntypedClient, httpLink } from "@trpc/client";
import { initTRPC, TRPCError } from "@trpc/server";
import { createHTTPServer } from "@trpc/server/adapters/standalone";
import { EventSource } from "eventsource";
import superjson from "superjson";
import { z } from "zod";
import { createTrpcTransport } from "../src/client.js";
import {
  createPaiRouter,
  guardTransformer,
  type PaiRouterFilesOptions,
  type PaiRouterLimits,
  paiErrorData,
} from "../src/index.js";

/**
 * An example host app, as a team would write it: its own tRPC instance (superjson, an error
 * formatter), its own auth middleware reading a bearer token, its own procedures, and PAI
 * mounted under `pai` with the identity taken from the host's context.
 */

export type HostUser = { userId: string; scopeKey: string };
export type HostContext = { user: HostUser | null };

const t = initTRPC.context<HostContext>().create({
  transformer: guardTransformer(superjson),
  errorFormatter: ({ shape, error }) => ({ ...shape, data: { ...shape.data, pai: paiErrorData(error) } }),
  sse: { ping: { enabled: true, intervalMs: 1_000 }, client: { reconnectAfterInactivityMs: 3_000 } },
});

const authed = t.procedure.use(({ ctx, next }) => {
  if (!ctx.user) throw new TRPCError({ code: "UNAUTHORIZED", message: "Sign in first." });
  return next({ ctx: { user: ctx.user } });
});

export function createHostRouter(
  service: PaiService,
  options: {
    limits?: Partial<PaiRouterLimits>;
    files?: PaiRouterFilesOptions;
    onInternalError?: (error: unknown) => void;
  } = {},
) {
  return t.router({
    health: t.procedure.query(() => ({ ok: true, at: new Date(0) })),
    me: authed
      .input(z.object({ greeting: z.string() }))
      .query(({ ctx, input }) => `${input.greeting}, ${ctx.user.userId}`),
    pai: createPaiRouter({
      procedure: authed,
      service,
      identity: (ctx) => ({ userId: ctx.user.userId, scopeKey: ctx.user.scopeKey }),
      ...(options.limits ? { limits: options.limits } : {}),
      ...(options.files ? { files: options.files } : {}),
      ...(options.onInternalError ? { onInternalError: options.onInternalError } : {}),
    }),
  });
}

export type HostRouter = ReturnType<typeof createHostRouter>;

function userFromAuthorization(header: string | undefined): HostUser | null {
  const match = /^Bearer (\w+):(\w+)$/.exec(header ?? "");
  return match ? { userId: match[1], scopeKey: match[2] } : null;
}

export type RunningHost = {
  url: string;
  /** Path and query of every HTTP request the server received, in arrival order. */
  requests: string[];
  /** Destroys every open connection (SSE streams included) without stopping the server. */
  cutConnections(): void;
  close(): Promise<void>;
  [Symbol.asyncDispose](): Promise<void>;
};

export async function startHost(
  service: PaiService,
  options: Parameters<typeof createHostRouter>[1] = {},
): Promise<RunningHost> {
  const server = createHTTPServer({
    router: createHostRouter(service, options),
    createContext: ({ req }) => ({ user: userFromAuthorization(req.headers.authorization) }),
  });
  const requests: string[] = [];
  server.on("request", (req) => requests.push(req.url ?? ""));
  const sockets = new Set<Socket>();
  server.on("connection", (socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  const close = async () => {
    for (const socket of sockets) socket.destroy();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  };
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    cutConnections: () => {
      for (const socket of sockets) socket.destroy();
    },
    close,
    [Symbol.asyncDispose]: close,
  };
}

/** A PAI transport for one signed-in user of the host app (a separate HTTP connection per client). */
export function transportFor(url: string, user: HostUser | null, options: { batch?: boolean } = {}) {
  return createTrpcTransport({
    url,
    ...options,
    transformer: superjson,
    EventSource,
    headers: () => (user ? { authorization: `Bearer ${user.userId}:${user.scopeKey}` } : {}),
  });
}

/** An untyped tRPC client of the host for one user: raw procedure calls, e.g. with `waitMs`. */
export function rawClientFor(url: string, user: HostUser) {
  return createTRPCUntypedClient({
    links: [
      httpLink({
        url,
        transformer: superjson,
        headers: () => ({ authorization: `Bearer ${user.userId}:${user.scopeKey}` }),
      }),
    ],
  });
}

/** The host's `scope`: the user's tenant, with the user as the user key. */
export function hostScope(identity: unknown) {
  const user = identity as HostUser;
  return { scopeKey: user.scopeKey, userKey: user.userId };
}

/**
 * Test runtimes (memory storage unless given, the host's scope) each served by the host app;
 * `closeAll()` (in `afterEach`) closes every host, then every runtime.
 */
export function servedRuntimes() {
  const runtimes: TestRuntime<any>[] = [];
  const hosts: RunningHost[] = [];
  return {
    async start<const TAgent extends Parameters<typeof createTestRuntime>[0]["agent"]>(
      options: Omit<TestRuntimeOptions<TAgent>, "scope" | "storage"> &
        Partial<Pick<TestRuntimeOptions<TAgent>, "storage">>,
      hostOptions: Parameters<typeof createHostRouter>[1] = {},
    ) {
      const runtime = await createTestRuntime({ storage: memoryStorage(), scope: hostScope, ...options });
      runtimes.push(runtime);
      const host = await startHost(runtime.pai.service, hostOptions);
      hosts.push(host);
      return { runtime, host, service: runtime.pai.service };
    },
    async closeAll() {
      await Promise.all(hosts.splice(0).map((host) => host.close()));
      await Promise.all(runtimes.splice(0).map((runtime) => runtime.close()));
    },
  };
}
