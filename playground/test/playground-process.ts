import { type ChildProcess, spawn } from "node:child_process";
import { createServer } from "node:net";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

// The built playground server as a child process for the browser test (e2e.test.ts).

const root = fileURLToPath(new URL("..", import.meta.url));

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

/** The playground server as a child process, so the test can stop and start it again. */
export class PlaygroundProcess {
  #child: ChildProcess | null = null;
  output = "";
  constructor(
    readonly port: number,
    readonly dataDir: string,
  ) {}

  get url() {
    return `http://127.0.0.1:${this.port}`;
  }

  async start(): Promise<void> {
    const child = spawn(process.execPath, [join(root, "dist/server/main.mjs")], {
      env: { ...process.env, PORT: String(this.port), PAI_PLAYGROUND_DATA: this.dataDir },
      stdio: ["ignore", "pipe", "pipe"],
    });
    this.#child = child;
    let started = "";
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`The server did not start:\n${started}`)), 150_000);
      child.stdout?.on("data", (chunk: Buffer) => {
        started += chunk.toString();
        this.output += chunk.toString();
        if (started.includes(`ready: ${this.url}`)) {
          clearTimeout(timer);
          resolve();
        }
      });
      child.stderr?.on("data", (chunk: Buffer) => {
        started += chunk.toString();
        this.output += chunk.toString();
      });
      child.once("exit", (code) => {
        clearTimeout(timer);
        reject(new Error(`The server exited with ${code}:\n${started}`));
      });
    });
  }

  async stop(): Promise<void> {
    const child = this.#child;
    this.#child = null;
    if (!child || child.exitCode !== null) return;
    const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
    child.kill("SIGTERM");
    await exited;
  }
}
