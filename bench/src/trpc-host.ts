import type { AddressInfo } from "node:net";
import type { Pai } from "@pai/core";
import { createPaiRouter } from "@pai/transport-trpc";
import { createTRPCClient, httpLink } from "@trpc/client";
import { initTRPC } from "@trpc/server";
import { createHTTPServer } from "@trpc/server/adapters/standalone";

const t = initTRPC.create();

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
  const server = createHTTPServer({ router: hostRouter(pai, identity) });
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
