import type { AddressInfo } from "node:net";
import type { Pai } from "@pai/core";
import { createPaiRouter } from "@pai/transport-trpc";
import { createTRPCClient, httpLink } from "@trpc/client";
import { type AnyTRPCRouter, initTRPC } from "@trpc/server";
import { createHTTPServer } from "@trpc/server/adapters/standalone";
import { type Kysely, sql } from "kysely";
import { insertOne } from "./floor.ts";
import { WAIT_MS } from "./scenarios.ts";

const t = initTRPC.create();

/**
 * Serves `router` over loopback HTTP with tRPC's standalone adapter, the server every HTTP row
 * and its floors share, with the `httpLink` their clients use. A host's idle connections
 * stay open for a minute: with Node's 5 s default, a flow measured after about 5 s of other tasks
 * met the server closing the socket fetch was about to reuse (ECONNRESET), a race of the bench's
 * pacing, not of PAI.
 */
async function listen(router: AnyTRPCRouter) {
  const server = createHTTPServer({ router });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    links: [httpLink({ url: `http://127.0.0.1:${port}` })],
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections?.();
        server.close(() => resolve());
      }),
  };
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
  const { links, close } = await listen(hostRouter(pai, identity));
  return { client: createTRPCClient<ReturnType<typeof hostRouter>>({ links }), close };
}

/** What the requests of the floors' flows need of a client (their routers have the same procedures). */
type FlowClient = {
  create: {
    mutate(
      input: unknown,
    ): Promise<{ threadId: string; settled?: { view: { pending: Array<{ ref: { actionId: string } }> } } }>;
  };
  send: { mutate(input: unknown): Promise<unknown> };
  get: { query(input: unknown): Promise<{ actions: Array<{ actionId: string }> }> };
  submit: { mutate(input: unknown): Promise<unknown> };
};

/**
 * How the flow runs: `waiting`, two requests (`create` with the first message and `submit`, each
 * answering once its run stopped: `waitMs`), or `create-then-send`, four (create, send, get,
 * submit), as every round-2 pass before the nineteenth measured it.
 */
export type FlowStart = "waiting" | "create-then-send";

export const requestsOf = (start: FlowStart) => (start === "waiting" ? 2 : 4);

/**
 * The suspend -> resume flow's requests; `settled`, when given, waits for what the first message
 * and `submit` set going in the flow that does not wait.
 */
async function flowRequests(client: FlowClient, start: FlowStart, settled?: () => Promise<unknown>) {
  const message = { text: "ship?" };
  if (start === "waiting") {
    const created = await client.create.mutate({ message, waitMs: WAIT_MS });
    const actionId = created.settled?.view.pending[0]?.ref.actionId;
    await client.submit.mutate({ threadId: created.threadId, actionId, waitMs: WAIT_MS });
    return;
  }
  const { threadId } = await client.create.mutate({});
  await client.send.mutate({ threadId, message });
  if (settled) await settled();
  const snapshot = await client.get.query({ threadId });
  await client.submit.mutate({ threadId, actionId: snapshot.actions[0]?.actionId });
  if (settled) await settled();
}

const settledView = { done: true, view: { pending: [{ ref: { actionId: "a" } }] } };
const waits = (input: unknown) => (input as { waitMs?: unknown } | undefined)?.waitMs !== undefined;

/**
 * The floor under the PAI rows: the same server and client with no-op procedures shaped like
 * the suspend -> resume flow, so the HTTP row reads as PAI against tRPC rather than against in process.
 */
const bareRouter = t.router({
  create: t.procedure
    .input((value) => value)
    .mutation(({ input }) => (waits(input) ? { threadId: "t", settled: settledView } : { threadId: "t" })),
  send: t.procedure.input((value) => value).mutation(() => ({ accepted: true })),
  get: t.procedure.input((value) => value).query(() => ({ actions: [{ actionId: "a", state: "pending" }] })),
  submit: t.procedure
    .input((value) => value)
    .mutation(({ input }) => (waits(input) ? { accepted: true, settled: settledView } : { accepted: true })),
});

export async function startBareTrpcHost() {
  const { links, close } = await listen(bareRouter);
  const client = createTRPCClient<typeof bareRouter>({ links });
  return {
    /** The requests of the PAI flow, against no-op procedures. */
    flow: (start: FlowStart) => flowRequests(client, start),
    close,
  };
}

/**
 * The HTTP flow's floor in sequence: a bare tRPC host whose procedures send the statements PAI's
 * flow sends, where and when it sends them. `create`, `send` and `submit` answer after a durable
 * insert, `get` after a `select 1`; a first message (`send`, or `create` with one) and `submit`
 * then leave two more inserts running one after the other (the run's step and its suspension,
 * or the tool's result and the last step). A request that waits (`waitMs`) answers after those;
 * otherwise the client waits for them as the PAI flow waits for the run to be idle. No PAI code
 * runs: what it takes is tRPC and Postgres doing the flow's work in the flow's order, with the
 * gaps between the statements that HTTP puts there (a statement after an idle spell costs more
 * than one right after another; bench/README.md, sixteenth pass).
 */
export async function startSequenceFloorHost(db: Kysely<any>, table: string) {
  let background: Promise<void> = Promise.resolve();
  const insertThenWork = async (input: unknown, startsWork: boolean) => {
    await insertOne(db, table);
    if (startsWork) {
      background = (async () => {
        await insertOne(db, table);
        await insertOne(db, table);
      })();
      if (waits(input)) await background;
    }
  };
  const startsWork = t.procedure
    .input((value) => value)
    .mutation(async ({ input }) => {
      await insertThenWork(input, true);
      return waits(input) ? { accepted: true, settled: settledView } : { accepted: true };
    });
  const router = t.router({
    create: t.procedure
      .input((value) => value)
      .mutation(async ({ input }) => {
        await insertThenWork(input, (input as { message?: unknown }).message !== undefined);
        return waits(input) ? { threadId: "t", settled: settledView } : { threadId: "t" };
      }),
    send: startsWork,
    get: t.procedure
      .input((value) => value)
      .query(async () => {
        await sql`select 1`.execute(db);
        return { actions: [{ actionId: "a", state: "pending" }] };
      }),
    submit: startsWork,
  });
  const { links, close } = await listen(router);
  const client = createTRPCClient<typeof router>({ links });
  return {
    flow: (start: FlowStart) => flowRequests(client, start, () => background),
    close,
  };
}
