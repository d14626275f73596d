import { mkdir } from "node:fs/promises";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { join } from "node:path";
import { Readable } from "node:stream";
import { PGlite } from "@electric-sql/pglite";
import { createPaiChatHandler, toNodeListener } from "@pai/ai-sdk/server";
import {
  type AgentManifest,
  agentManifest,
  createPai,
  getErrorMessage,
  PaiError,
  type PaiService,
  type RuntimeErrorReport,
} from "@pai/core";
import { localFiles } from "@pai/files-local";
import { sandboxPlugin } from "@pai/sandbox";
import { createPgliteDialect, kyselyStorage, migrateToLatest } from "@pai/storage-kysely";
import { createPaiRouter, guardTransformer, paiErrorData } from "@pai/transport-trpc";
import { initTRPC } from "@trpc/server";
import { createHTTPHandler } from "@trpc/server/adapters/standalone";
import { Kysely } from "kysely";
import superjson from "superjson";
import { agent } from "./agent.js";
import { identityFromRequest, type PlaygroundIdentity, scopeOf } from "./identity.js";
import { chooseModel } from "./model.js";
import { serveStatic } from "./static-files.js";

export type PlaygroundServerOptions = {
  /** Port to listen on; 0 picks a free one. */
  port: number;
  host?: string;
  /** Where PGlite and the uploaded/generated files live. Created when missing. */
  dataDir: string;
  /** The built web UI (`vite build` output). */
  webDir: string;
  log?: (line: string) => void;
};

export type PlaygroundServer = {
  url: string;
  modelLabel: string;
  close(): Promise<void>;
};

type Context = { identity: PlaygroundIdentity };

const t = initTRPC.context<Context>().create({
  // Refuses __proto__ / constructor / prototype keys and over-deep JSON on the raw request,
  // before superjson would silently drop them.
  transformer: guardTransformer(superjson),
  // Stacks stay out of error responses unless explicitly developing PAI itself.
  isDev: process.env.PAI_DEV === "1",
  // PAI's error code and validation issues ride along, so the UI can show field messages.
  errorFormatter: ({ shape, error }) => ({ ...shape, data: { ...shape.data, pai: paiErrorData(error) } }),
  sse: { ping: { enabled: true, intervalMs: 5_000 }, client: { reconnectAfterInactivityMs: 12_000 } },
});

function createAppRouter(
  service: PaiService,
  manifest: () => Promise<AgentManifest>,
  log: (line: string) => void,
) {
  return t.router({
    health: t.procedure.query(() => ({ ok: true })),
    me: t.procedure.query(({ ctx }) => ctx.identity),
    // The full manifest (JSON Schemas of inputs, outputs, suspend and resume payloads): the UI
    // generates its pending-action forms from it.
    manifest: t.procedure.query(() => manifest()),
    pai: createPaiRouter({
      procedure: t.procedure,
      service,
      identity: (ctx) => ctx.identity,
      onInternalError: (error, { path, correlationId }) =>
        log(`pai.${path} failed (reference ${correlationId}): ${getErrorMessage(error)}`),
    }),
  });
}

/** The router type the web UI could use for a typed tRPC client. */
export type PlaygroundRouter = ReturnType<typeof createAppRouter>;

const FILE_ROUTE = /^\/files\/([A-Za-z0-9_-]+)$/;

/**
 * Starts the playground: PGlite storage and local files under `dataDir` (migrated on start),
 * the PAI runtime with the demo agent, and one HTTP server for the tRPC API (`/api/trpc`,
 * SSE for `watch`), the AI SDK chat protocol (`/api/chat`), file downloads (`/files/:fileId`)
 * and the built web UI.
 */
export async function startPlaygroundServer(options: PlaygroundServerOptions): Promise<PlaygroundServer> {
  const log = options.log ?? ((line: string) => console.log(line));
  await mkdir(options.dataDir, { recursive: true });
  const pglite = new PGlite(join(options.dataDir, "pglite"));
  const db = new Kysely<any>({ dialect: createPgliteDialect(pglite) });
  await migrateToLatest(db);
  const { model, label } = chooseModel();
  const pai = createPai({
    agents: { main: agent },
    storage: kyselyStorage({ db }),
    files: localFiles({ directory: join(options.dataDir, "files"), maxFileBytes: 10 * 1_048_576 }),
    model,
    scope: scopeOf,
    // Binds the sandbox capability runShell declares: one in-memory shell per thread.
    plugins: [sandboxPlugin({ limits: { timeoutMs: 5_000, maxOutputBytes: 16_384 } })],
    onRuntimeError: (report: RuntimeErrorReport) =>
      log(
        `[${report.phase}] ${report.operation ?? report.toolName ?? ""} ${report.correlationId ? `(reference ${report.correlationId}) ` : ""}${getErrorMessage(report.error)}`.replace(
          / +/g,
          " ",
        ),
      ),
  });
  // Runs a crashed process left behind (expired leases) continue here.
  await pai.recover();
  pai.startRecovery({ intervalMs: 5_000 });

  const manifest = await agentManifest(pai.agents.main as unknown as Parameters<typeof agentManifest>[0]);
  const trpc = createHTTPHandler({
    router: createAppRouter(pai.service, async () => manifest, log),
    basePath: "/api/trpc/",
    // Uploads travel as base64 (a third larger than the 10 MiB file limit) plus the JSON around them.
    maxBodySize: 14 * 1_048_576,
    createContext: ({ req }) => ({ identity: identityFromRequest(req) }),
  });

  // The same thread behind the AI SDK's own chat protocol, for the stock useChat page (#/chat).
  const chat = toNodeListener(
    createPaiChatHandler({
      pai,
      identity: (request) =>
        identityFromRequest({
          headers: {
            "x-pai-user": request.headers.get("x-pai-user") ?? undefined,
            cookie: request.headers.get("cookie") ?? undefined,
          },
        }),
    }),
  );

  const downloadFile = async (req: IncomingMessage, res: ServerResponse, fileId: string) => {
    try {
      const file = await pai.service.files.get({ identity: identityFromRequest(req), fileId });
      res.writeHead(200, {
        "content-type": file.mediaType,
        "content-length": String(file.size),
        "content-disposition": `attachment; filename="${file.filename.replace(/[^\w.-]/g, "_")}"`,
        "cache-control": "private, no-store",
      });
      Readable.fromWeb(file.body as never).pipe(res);
    } catch (error) {
      const status = PaiError.isInstance(error) && error.code === "NOT_FOUND" ? 404 : 500;
      res.writeHead(status, { "content-type": "text/plain" });
      res.end(status === 404 ? "File not found." : "Could not read the file.");
    }
  };

  const server = createServer((req, res) => {
    const path = new URL(req.url ?? "/", "http://localhost").pathname;
    if (path.startsWith("/api/trpc/")) return trpc(req, res);
    if (path === "/api/chat") return void chat(req, res);
    const file = FILE_ROUTE.exec(path);
    if (file && req.method === "GET") return void downloadFile(req, res, file[1]);
    return void serveStatic(req, res, options.webDir);
  });
  // SSE streams stay open; close() ends them so the port is freed at once.
  const sockets = new Set<Socket>();
  server.on("connection", (socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port, options.host ?? "127.0.0.1", () => resolve());
  });
  const address = server.address() as AddressInfo;
  const host = address.address.includes(":") ? `[${address.address}]` : address.address;

  let closing: Promise<void> | null = null;
  const close = () => {
    closing ??= (async () => {
      const stopped = new Promise<void>((resolve) => server.close(() => resolve()));
      for (const socket of sockets) socket.destroy();
      await stopped;
      await pai.close();
      await db.destroy();
    })();
    return closing;
  };
  return { url: `http://${host}:${address.port}`, modelLabel: label, close };
}
