import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import type { ClusterConfig } from "./fixtures/cluster-runtime.ts";

export const repoRoot = fileURLToPath(new URL("../../../", import.meta.url));
const scripts = {
  api: fileURLToPath(new URL("./fixtures/api-process.ts", import.meta.url)),
  worker: fileURLToPath(new URL("./fixtures/worker-process.ts", import.meta.url)),
};

/** A line a process printed, with the instant (its own clock) it printed it. */
export type ProcessEvent = { at: number; kind: string; [key: string]: any };

/**
 * An API or worker process of the cluster test, started with Node's type stripping on the built
 * packages and read through its stdout JSON lines.
 */
export class ClusterProcess {
  readonly events: ProcessEvent[] = [];
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  readonly spawnedAt = Date.now();
  readyAt: number | undefined;
  /** When a worker called `startWorker` (a standby only once the test told it to). */
  startingAt: number | undefined;
  /** When `startWorker` resolved. */
  workingAt: number | undefined;
  /** A standby the test told to start working. */
  promoted = false;
  /** When the test sent SIGKILL (every line the process printed is before this instant). */
  killedAt: number | undefined;
  exitedAt: number | undefined;
  exit: { code: number | null; signal: NodeJS.Signals | null } | undefined;
  readonly #child: ChildProcessWithoutNullStreams;
  readonly #listeners = new Set<(event: ProcessEvent) => void>();
  /** Model steps and tool calls in progress now (by what the process printed). */
  readonly #open = new Set<string>();
  #stderr = "";

  constructor(readonly config: ClusterConfig) {
    this.#child = spawn(process.execPath, [scripts[config.role]], {
      cwd: repoRoot,
      env: {
        ...process.env,
        PAI_DISPATCH_CLUSTER: JSON.stringify(config),
        // Shared compile cache: the processes restarted after each kill start faster.
        NODE_COMPILE_CACHE: join(tmpdir(), "pai-dispatch-cluster-compile-cache"),
        NODE_NO_WARNINGS: "1",
      },
      stdio: ["pipe", "pipe", "pipe"],
    });
    this.#child.stderr.setEncoding("utf8");
    this.#child.stderr.on("data", (chunk: string) => {
      this.#stderr = (this.#stderr + chunk).slice(-8_000);
    });
    this.#child.stdin.on("error", () => {});
    createInterface({ input: this.#child.stdout }).on("line", (line) => this.#onLine(line));
    this.exited = new Promise((resolve) => {
      this.#child.on("exit", (code, signal) => {
        this.exitedAt = Date.now();
        this.exit = { code, signal };
        resolve({ code, signal });
      });
    });
  }

  get instanceId(): string {
    return this.config.instanceId;
  }

  get role(): "api" | "worker" {
    return this.config.role;
  }

  get alive(): boolean {
    return this.exit === undefined && this.killedAt === undefined;
  }

  /** Whether the process is in a model step or tool call right now. */
  get busy(): boolean {
    return this.#open.size > 0;
  }

  get stderr(): string {
    return this.#stderr;
  }

  /** When the process stopped printing: its kill, or its exit. */
  get endedAt(): number | undefined {
    return this.killedAt ?? this.exitedAt;
  }

  #onLine(line: string): void {
    let event: ProcessEvent;
    try {
      event = JSON.parse(line) as ProcessEvent;
    } catch {
      return; // not one of ours (or a line cut short)
    }
    if (event.kind === "ready") this.readyAt = event.at;
    if (event.kind === "starting") this.startingAt = event.at;
    if (event.kind === "rt") {
      const key = event.toolCallId ?? `${event.runId}:${event.step}`;
      if (event.event === "step-start" || event.event === "tool-start") this.#open.add(key);
      if (event.event === "step-end" || event.event === "tool-end") this.#open.delete(key);
    }
    if (event.kind === "working") this.workingAt = event.at;
    this.events.push(event);
    for (const listener of this.#listeners) listener(event);
  }

  send(request: Record<string, unknown>): void {
    if (this.exit === undefined) this.#child.stdin.write(`${JSON.stringify(request)}\n`);
  }

  /** Resolves with the first event (already printed or future) that matches, or rejects. */
  waitFor(
    predicate: (event: ProcessEvent) => boolean,
    timeoutMs: number,
    what: string,
  ): Promise<ProcessEvent> {
    const found = this.events.find(predicate);
    if (found) return Promise.resolve(found);
    return new Promise((resolve, reject) => {
      const done = (error: Error | null, event?: ProcessEvent) => {
        clearTimeout(timer);
        this.#listeners.delete(listener);
        if (error) reject(error);
        else resolve(event!);
      };
      const timer = setTimeout(
        () =>
          done(new Error(`${this.instanceId}: no ${what} within ${timeoutMs} ms. stderr: ${this.#stderr}`)),
        timeoutMs,
      );
      const listener = (event: ProcessEvent) => {
        if (predicate(event)) done(null, event);
      };
      this.#listeners.add(listener);
      void this.exited.then(() =>
        done(
          new Error(
            `${this.instanceId} exited (${this.exit?.signal ?? this.exit?.code}) before ${what}. stderr: ${this.#stderr}`,
          ),
        ),
      );
    });
  }

  ready(timeoutMs = 60_000): Promise<ProcessEvent> {
    return this.waitFor((event) => event.kind === "ready", timeoutMs, "ready line");
  }

  /** SIGKILL: nothing runs in the process any more (no lease release, no job handed back). */
  async kill(): Promise<void> {
    if (this.exit === undefined && this.killedAt === undefined) {
      this.killedAt = Date.now();
      this.#child.kill("SIGKILL");
    }
    await this.exited;
  }

  /** Ends stdin: the process drains, closes and exits. SIGKILLs it after `timeoutMs`. */
  async stop(timeoutMs = 30_000): Promise<boolean> {
    if (this.exit !== undefined) return this.exit.code === 0;
    this.#child.stdin.end();
    const timer = setTimeout(() => this.#child.kill("SIGKILL"), timeoutMs);
    const { code } = await this.exited;
    clearTimeout(timer);
    return code === 0;
  }
}
