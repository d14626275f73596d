import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { postgresUrl, type WorkerEvent, WorkerRequestError } from "./worker-process.js";

const repoRoot = fileURLToPath(new URL("../../../../", import.meta.url));
const workerScript = fileURLToPath(new URL("./fixtures/effects-worker.ts", import.meta.url));

type Reply = {
  type: "reply";
  id: number;
  ok: boolean;
  result?: unknown;
  error?: { code: string; message: string };
};

/**
 * A child process running fixtures/effects-worker.ts, driven like `WorkerProcess` (same JSON
 * line protocol and environment); `events` holds everything the child's agent reported.
 */
export class EffectsProcess {
  readonly events: WorkerEvent[] = [];
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  readonly instanceId: string;
  readonly #child: ChildProcessWithoutNullStreams;
  readonly #pending = new Map<
    number,
    { resolve: (value: unknown) => void; reject: (error: Error) => void }
  >();
  readonly #listeners = new Set<(event: WorkerEvent) => void>();
  #nextId = 1;
  #stderr = "";
  #gone = false;

  constructor(config: { instanceId: string; poolMax?: number }) {
    this.instanceId = config.instanceId;
    this.#child = spawn(process.execPath, [workerScript], {
      cwd: repoRoot,
      env: {
        ...process.env,
        PAI_DURABILITY_WORKER: JSON.stringify({ url: postgresUrl, ...config }),
        NODE_COMPILE_CACHE: join(tmpdir(), "pai-durability-compile-cache"),
        NODE_NO_WARNINGS: "1",
      },
      stdio: ["pipe", "pipe", "pipe"],
    });
    this.#child.stderr.setEncoding("utf8");
    this.#child.stderr.on("data", (chunk: string) => {
      this.#stderr = (this.#stderr + chunk).slice(-4000);
    });
    this.#child.stdin.on("error", () => {});
    createInterface({ input: this.#child.stdout }).on("line", (line) => this.#onLine(line));
    this.exited = new Promise((resolve) => {
      this.#child.on("exit", (code, signal) => {
        this.#gone = true;
        for (const { reject } of this.#pending.values()) {
          reject(new Error(`worker ${this.instanceId} exited (${signal ?? code}). stderr: ${this.#stderr}`));
        }
        this.#pending.clear();
        resolve({ code, signal });
      });
    });
  }

  #onLine(line: string): void {
    let message: Reply | WorkerEvent;
    try {
      message = JSON.parse(line) as Reply | WorkerEvent;
    } catch {
      return;
    }
    if (message.type === "reply") {
      const waiter = this.#pending.get(message.id);
      this.#pending.delete(message.id);
      if (!waiter) return;
      if (message.ok) waiter.resolve(message.result);
      else waiter.reject(new WorkerRequestError(message.error!.code, message.error!.message));
      return;
    }
    this.events.push(message);
    for (const listener of this.#listeners) listener(message);
  }

  request<T = unknown>(op: string, args: Record<string, unknown> = {}): Promise<T> {
    return this.requestMany<T>([{ op, args }])[0]!;
  }

  /** Writes many requests in one chunk, so the child starts them in the same tick. */
  requestMany<T = unknown>(
    requests: Array<{ op: string; args: Record<string, unknown> }>,
  ): Array<Promise<T>> {
    if (this.#gone) {
      return requests.map(() => Promise.reject(new Error(`worker ${this.instanceId} is gone`)));
    }
    const lines: string[] = [];
    const replies = requests.map(({ op, args }) => {
      const id = this.#nextId++;
      lines.push(JSON.stringify({ id, op, args }));
      return new Promise<T>((resolve, reject) => {
        this.#pending.set(id, { resolve: resolve as (value: unknown) => void, reject });
      });
    });
    this.#child.stdin.write(`${lines.join("\n")}\n`);
    return replies;
  }

  /** Resolves with the first event (already received or future) that matches. */
  waitForEvent(predicate: (event: WorkerEvent) => boolean, timeoutMs = 20_000): Promise<WorkerEvent> {
    const found = this.events.find(predicate);
    if (found) return Promise.resolve(found);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.#listeners.delete(listener);
        reject(new Error(`worker ${this.instanceId}: no matching event within ${timeoutMs} ms`));
      }, timeoutMs);
      const listener = (event: WorkerEvent) => {
        if (!predicate(event)) return;
        clearTimeout(timer);
        this.#listeners.delete(listener);
        resolve(event);
      };
      this.#listeners.add(listener);
    });
  }

  ready(timeoutMs = 120_000): Promise<WorkerEvent> {
    return Promise.race([
      this.waitForEvent((event) => event.kind === "ready", timeoutMs),
      this.exited.then(() => {
        throw new Error(`worker ${this.instanceId} exited before it was ready. stderr: ${this.#stderr}`);
      }),
    ]);
  }

  /** Ends stdin; the child closes its runtimes and exits. */
  async stop(): Promise<void> {
    if (this.#gone) return;
    this.#child.stdin.end();
    const timer = setTimeout(() => this.#child.kill("SIGKILL"), 10_000);
    await this.exited;
    clearTimeout(timer);
  }

  get stderr(): string {
    return this.#stderr;
  }
}
