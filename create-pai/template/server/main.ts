import { existsSync } from "node:fs";
import type { IncomingMessage, ServerResponse } from "node:http";
import { fileURLToPath } from "node:url";
import { startApp } from "./app.ts";
import { openDatabase } from "./db.ts";
import { chooseModel } from "./model.ts";
import { serveStatic } from "./static.ts";

// Settings such as OPENAI_API_KEY can live in .env (see .env.example).
if (existsSync(".env")) process.loadEnvFile(".env");

// `npm run dev` passes --dev: the page comes from Vite's dev server (instant updates) instead of dist/.
const dev = process.argv.includes("--dev");
const port = Number(process.env.PORT ?? 3000);

const database = await openDatabase().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : error);
  process.exit(1);
});
const { model, label } = chooseModel();

let web: (req: IncomingMessage, res: ServerResponse) => void;
let closeWeb = async () => {};
if (dev) {
  const { createServer } = await import("vite");
  const vite = await createServer({ server: { middlewareMode: true }, appType: "spa" });
  web = (req, res) => vite.middlewares(req, res);
  closeWeb = () => vite.close();
} else {
  const root = fileURLToPath(new URL("../dist", import.meta.url));
  web = (req, res) => void serveStatic(req, res, root);
}

try {
  const app = await startApp({
    db: database.db,
    model,
    port,
    host: process.env.HOST ?? "127.0.0.1",
    web,
    dev,
  });
  console.log(`PAI app ready: ${app.url}${dev ? " (development)" : ""}`);
  console.log(`  model:    ${label}`);
  console.log(`  database: ${database.label}`);

  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    console.log(`${signal}: shutting down`);
    app
      .close()
      .then(closeWeb)
      .then(() => database.close())
      .then(
        () => process.exit(0),
        (error: unknown) => {
          console.error("Shutdown failed:", error);
          process.exit(1);
        },
      );
  };
  process.on("SIGINT", () => stop("SIGINT"));
  process.on("SIGTERM", () => stop("SIGTERM"));
} catch (error) {
  const inUse = (error as { code?: string }).code === "EADDRINUSE";
  console.error(inUse ? `Port ${port} is in use: try PORT=${port + 1} npm start` : error);
  await closeWeb();
  await database.close();
  process.exit(1);
}
