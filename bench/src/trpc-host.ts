import type { AddressInfo } from "node:net";
import type { Pai } from "@pai/core";
import { createPaiRouter } from "@pai/transport-trpc";
import { createTRPCClient, httpLink } from "@trpc/client";
import { initTRPC } from "@trpc/server";
import { createHTTPServer } from "@trpc/server/adapters/standalone";

const t = initTRPC.create();

/**
 * A host's idle connections stay open for a minute. With Node's 5 s default, a flow measured
 * after about 5 s of other tasks met the server closing the socket fetch was about to reuse
 * (ECONNRESET), a race of the bench's pacing, not of PAI.
 */
function keptAlive<T extends { keepAliveTimeout: number }>(server: T): T {
  server.keepAliveTimeout = 60_000;
  return server;
}

/** A minimal host app: PAI's router on the host's own tRPC instance, served over loopback HTTP. */
function hostRouter(pai: Pai, identity: unknown) {
  return t.router({
    pai: createPaiRouter({ procedure: t.procedure, service: pai.service, identity: () => identity }),
  });
}

export type BenchHost = {
  client: ReturnType<typeof createTRPCClient<ReturnType<typeof hostRouter>>>;
  close(): Promise<void>;
};

export async function startBenchHost(pai: Pai, identity: unknown): Promise<BenchHost> {
  const server = keptAlive(createHTTPServer({ router: hostRouter(pai, identity) }));
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  const client = createTRPCClient<ReturnType<typeof hostRouter>>({
    links: [httpLink({ url: `http://127.0.0.1:${port}` })],
  });
  return {
    client,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections?.();
        server.close(() => resolve());
      }),
  };
}

/**
 * The floor under the PAI rows: the same server and client with four no-op procedures shaped like
 * the suspend -> resume flow, so the HTTP row reads as PAI against tRPC rather than against in process.
 */
const bareRouter = t.router({
  create: t.procedure.input((value) => value).mutation(() => ({ threadId: "t" })),
  send: t.procedure.input((value) => value).mutation(() => ({ accepted: true })),
  get: t.procedure.input((value) => value).query(() => ({ actions: [{ actionId: "a", state: "pending" }] })),
  submit: t.procedure.input((value) => value).mutation(() => ({ accepted: true })),
});

export async function startBareTrpcHost() {
  const server = keptAlive(createHTTPServer({ router: bareRouter }));
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  const client = createTRPCClient<typeof bareRouter>({
    links: [httpLink({ url: `http://127.0.0.1:${port}` })],
  });
  return {
    /** The four requests of the PAI flow, against no-op procedures. */
    flow: async () => {
      const thread = await client.create.mutate({});
      await client.send.mutate({ threadId: thread.threadId, message: { text: "ship?" } });
      const snapshot = await client.get.query({ threadId: thread.threadId });
      await client.submit.mutate({ threadId: thread.threadId, actionId: snapshot.actions[0]?.actionId });
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections?.();
        server.close(() => resolve());
      }),
  };
}
