import { fileURLToPath } from "node:url";
import { getErrorMessage } from "@pai/core";
import { startPlaygroundServer } from "./start-server.js";

// Entry of `npm start`: bundled to dist/server/main.mjs, so paths are relative to dist/server.
const here = (path: string) => fileURLToPath(new URL(path, import.meta.url));

const port = Number(process.env.PORT ?? 4477);
const dataDir = process.env.PAI_PLAYGROUND_DATA ?? here("../../.data");
const webDir = process.env.PAI_PLAYGROUND_WEB ?? here("../web");

try {
  const server = await startPlaygroundServer({
    port,
    host: process.env.HOST ?? "127.0.0.1",
    dataDir,
    webDir,
  });
  console.log(`PAI playground ready: ${server.url}`);
  console.log(`  model: ${server.modelLabel}`);
  console.log(`  data:  ${dataDir}`);
  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    console.log(`${signal}: shutting down`);
    server.close().then(
      () => process.exit(0),
      (error: unknown) => {
        console.error(`Shutdown failed: ${getErrorMessage(error)}`);
        process.exit(1);
      },
    );
  };
  process.on("SIGINT", () => stop("SIGINT"));
  process.on("SIGTERM", () => stop("SIGTERM"));
} catch (error) {
  const inUse = (error as { code?: string }).code === "EADDRINUSE";
  console.error(
    inUse
      ? `Port ${port} is in use. Stop the other process or pick another port: PORT=4478 npm start`
      : `The playground could not start: ${getErrorMessage(error)}`,
  );
  process.exit(1);
}
