// One instance of the deployment example: PAI on Postgres (with the LISTEN/NOTIFY notifier, so
// watchers see runs driven by other instances), a tRPC HTTP server, and the recovery loop that
// adopts runs of crashed instances. Start as many as you like on the same database.
//
// Settings (environment):
//   DATABASE_URL               Postgres connection string (required)
//   PORT, HOST                 where to listen (default 3000, 0.0.0.0); PORT=0 picks a free port
//   PAI_INSTANCE_ID            this instance's name in leases and logs (default: the host name)
//   PAI_TABLE_PREFIX           prefix of PAI's tables (default pai_)
//   PAI_NOTIFY_CHANNEL         NOTIFY channel shared by the instances (default pai_notify)
//   PAI_LEASE_MS               run lease length (default 30000)
//   PAI_RECOVERY_INTERVAL_MS   how often to look for runs of dead instances (default 5000)
//   APP_TOKENS                 demo sign-in: "token=user@org,token2=user2@org2" (replace with your auth)
//   OPENAI_API_KEY, OPENAI_BASE_URL, PAI_MODEL   a real model; without a key the demo model answers
//
// Logs are JSON lines on stdout: `listening`, runtime events (ids only), recovery and errors.

import { createServer } from "node:http";
import { hostname } from "node:os";
import { createPai, getErrorMessage } from "@pai/core";
import { kyselyStorage, migrateToLatest, postgresNotifier } from "@pai/storage-kysely";
import { createPaiRouter, guardTransformer, paiErrorData } from "@pai/transport-trpc";
import { initTRPC, TRPCError } from "@trpc/server";
import { createHTTPHandler } from "@trpc/server/adapters/standalone";
import { Kysely, PostgresDialect } from "kysely";
import pg from "pg";
import superjson from "superjson";
import { agent } from "./agent.mjs";
import { chooseModel } from "./model.mjs";

const env = process.env;
const instanceId = env.PAI_INSTANCE_ID || hostname();
const log = (fields) =>
  console.log(JSON.stringify({ time: new Date().toISOString(), instanceId, ...fields }));

if (!env.DATABASE_URL) {
  log({ msg: "fatal", error: "DATABASE_URL is not set, e.g. postgres://pai:pai@postgres:5432/pai" });
  process.exit(1);
}

/** The demo's sign-in: bearer tokens mapped to `user@org`. A real app uses its own auth here. */
const users = new Map(
  (env.APP_TOKENS ?? "")
    .split(",")
    .map((entry) => entry.trim())
    .filter(Boolean)
    .map((entry) => {
      const [token, who] = entry.split("=");
      const [id, orgId] = (who ?? "").split("@");
      return [token, { id, orgId }];
    })
    .filter(([token, user]) => token && user.id && user.orgId),
);
const userOf = (req) => {
  const header = req.headers.authorization ?? "";
  return header.startsWith("Bearer ") ? (users.get(header.slice(7).trim()) ?? null) : null;
};

// Storage and notifier share one pool; the notifier opens its own connection for LISTEN.
const pool = new pg.Pool({ connectionString: env.DATABASE_URL, max: 10 });
const db = new Kysely({ dialect: new PostgresDialect({ pool }) });
const tablePrefix = env.PAI_TABLE_PREFIX ?? "pai_";
const notifier = postgresNotifier({
  pool,
  channel: env.PAI_NOTIFY_CHANNEL ?? "pai_notify",
  onError: (error) => log({ msg: "notifier-error", error: getErrorMessage(error) }),
});
// Safe to run on every start, by every instance at once: the migrator holds an advisory lock.
await migrateToLatest(db, { tablePrefix });

const { model, label } = await chooseModel(env);
const pai = createPai({
  agents: { ops: agent },
  storage: kyselyStorage({ db, tablePrefix, notifier }),
  model,
  scope: (user) => ({ scopeKey: user.orgId, userKey: user.id }),
  instanceId,
  leaseMs: Number(env.PAI_LEASE_MS ?? 30_000),
  // Runtime events carry ids only (never inputs, outputs or payloads), so they are safe to log.
  observers: [
    (event) =>
      log({
        msg: "runtime",
        ...event,
        ...("error" in event && event.error !== undefined ? { error: getErrorMessage(event.error) } : {}),
      }),
  ],
  onRuntimeError: (report) =>
    log({
      msg: "runtime-error",
      phase: report.phase,
      correlationId: report.correlationId,
      operation: report.operation,
      threadId: report.threadId,
      runId: report.runId,
      toolName: report.toolName,
      error: getErrorMessage(report.error),
    }),
});

// Runs left behind by a crashed instance: adopt them now, then keep looking.
const adopted = await pai.recover();
if (adopted > 0) log({ msg: "recovered", runs: adopted });
pai.startRecovery({ intervalMs: Number(env.PAI_RECOVERY_INTERVAL_MS ?? 5_000) });

const t = initTRPC.context().create({
  transformer: guardTransformer(superjson),
  isDev: false,
  errorFormatter: ({ shape, error }) => ({ ...shape, data: { ...shape.data, pai: paiErrorData(error) } }),
  // Proxies close idle connections; pings keep a quiet watch stream open.
  sse: { ping: { enabled: true, intervalMs: 15_000 } },
});
const authed = t.procedure.use(({ ctx, next }) => {
  if (!ctx.user) throw new TRPCError({ code: "UNAUTHORIZED", message: "Sign in first." });
  return next({ ctx: { user: ctx.user } });
});
const appRouter = t.router({
  pai: createPaiRouter({
    procedure: authed,
    service: pai.service,
    identity: (ctx) => ctx.user,
    onInternalError: (error, { path, correlationId }) =>
      log({ msg: "router-error", path, correlationId, error: getErrorMessage(error) }),
  }),
});

const trpc = createHTTPHandler({
  router: appRouter,
  basePath: "/trpc/",
  maxBodySize: 1_048_576, // this app accepts no uploads
  createContext: ({ req }) => ({ user: userOf(req) }),
});

let ready = true;
const sockets = new Set();
const server = createServer((req, res) => {
  res.setHeader("x-pai-instance", instanceId);
  const path = new URL(req.url ?? "/", "http://localhost").pathname;
  if (path === "/healthz") {
    res.writeHead(ready ? 200 : 503, { "content-type": "application/json" });
    res.end(JSON.stringify({ ok: ready, instanceId }));
    return;
  }
  if (path.startsWith("/trpc/")) return trpc(req, res);
  res.writeHead(404, { "content-type": "text/plain" });
  res.end("Not found.");
});
server.on("connection", (socket) => {
  sockets.add(socket);
  socket.on("close", () => sockets.delete(socket));
});
server.listen(Number(env.PORT ?? 3000), env.HOST ?? "0.0.0.0", () => {
  log({ msg: "listening", port: server.address().port, model: label });
});

let stopping = false;
async function stop(signal) {
  if (stopping) return;
  stopping = true;
  ready = false;
  log({ msg: "stopping", signal });
  const closed = new Promise((resolve) => server.close(resolve));
  for (const socket of sockets) socket.destroy(); // ends watch streams; clients reconnect elsewhere
  await closed;
  // Aborts the signal of every run this instance drives: a tool call in flight ends as cancelled
  // (the model is told so). A run whose next model call fails on the aborted signal is left for
  // the other instance's recovery, with its lease released; the demo model ignores the signal,
  // so its runs finish here. Parked runs (waiting on an action) need nothing.
  await pai.close();
  await notifier.close();
  await db.destroy();
  log({ msg: "stopped" });
  process.exit(0);
}
process.on("SIGTERM", () => void stop("SIGTERM"));
process.on("SIGINT", () => void stop("SIGINT"));
