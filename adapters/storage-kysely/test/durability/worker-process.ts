import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { migrateToLatest } from "@pai/storage-kysely";
import { Kysely, PostgresDialect, sql } from "kysely";
import pg from "pg";
import type { DelayRange } from "./fixtures/durability-agent.js";

const repoRoot = fileURLToPath(new URL("../../../../", import.meta.url));
const workerScript = fileURLToPath(new URL("./fixtures/runtime-worker.ts", import.meta.url));

export const postgresUrl = process.env.PAI_TEST_POSTGRES_URL ?? "postgres://postgres@127.0.0.1:5432/test";

/**
 * Child processes import `@pai/core` and `@pai/storage-kysely` from their built `dist`, with
 * the Node that runs the tests (Node 22 under `npm exec`). Fails with what to do when either
 * is missing.
 */
export function assertChildProcessesCanRun(): void {
  const features = process.features as { typescript?: string | false };
  if (!features.typescript) {
    throw new Error(
      `The durability tests start child processes on .ts files with Node's type stripping, which ${process.execPath} (Node ${process.versions.node}) lacks. Run them through npm so the repo's Node 22 is used: npm exec -- vitest run adapters/storage-kysely/test/durability`,
    );
  }
  const required = [
    "core/dist/index.js",
    "core/dist/testing/index.js",
    "adapters/storage-kysely/dist/index.js",
  ];
  const missing = required.filter((path) => !existsSync(join(repoRoot, path)));
  if (missing.length > 0) {
    throw new Error(
      `The durability tests run child processes on the built packages, but ${missing.join(", ")} is missing. Build first: npm run build -w @pai/core -w @pai/storage-memory -w @pai/storage-kysely`,
    );
  }
}

export type WorkerConfig = {
  instanceId: string;
  poolMax?: number;
  toolDelayMs?: DelayRange;
  modelDelayMs?: DelayRange;
};

export type WorkerEvent = { type: "event"; kind: string; [key: string]: unknown };

export class WorkerRequestError extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

type Reply = {
  type: "reply";
  id: number;
  ok: boolean;
  result?: unknown;
  error?: { code: string; message: string };
};

/** A runtime process driven over stdin/stdout JSON lines (see fixtures/runtime-worker.ts). */
export class WorkerProcess {
  readonly events: WorkerEvent[] = [];
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  readonly #child: ChildProcessWithoutNullStreams;
  readonly #pending = new Map<
    number,
    { resolve: (value: unknown) => void; reject: (error: Error) => void }
  >();
  readonly #listeners = new Set<(event: WorkerEvent) => void>();
  #nextId = 1;
  #stderr = "";
  #gone = false;

  constructor(readonly config: WorkerConfig) {
    this.#child = spawn(process.execPath, [workerScript], {
      cwd: repoRoot,
      env: {
        ...process.env,
        PAI_DURABILITY_WORKER: JSON.stringify({ url: postgresUrl, ...config }),
        // Shared compile cache: thirty children start noticeably faster on a busy machine.
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
          reject(
            new Error(`worker ${config.instanceId} exited (${signal ?? code}). stderr: ${this.#stderr}`),
          );
        }
        this.#pending.clear();
        resolve({ code, signal });
      });
    });
  }

  get pid(): number | undefined {
    return this.#child.pid;
  }

  #onLine(line: string): void {
    let message: Reply | WorkerEvent;
    try {
      message = JSON.parse(line) as Reply | WorkerEvent;
    } catch {
      return; // a line cut short by SIGKILL
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

  /** Sends one request; requests are handled concurrently by the child. */
  request<T = unknown>(op: string, args: Record<string, unknown> = {}): Promise<T> {
    if (this.#gone) return Promise.reject(new Error(`worker ${this.config.instanceId} is gone`));
    const id = this.#nextId++;
    const reply = new Promise<T>((resolve, reject) => {
      this.#pending.set(id, { resolve: resolve as (value: unknown) => void, reject });
    });
    this.#child.stdin.write(`${JSON.stringify({ id, op, args })}\n`);
    return reply;
  }

  /** Writes many requests in one chunk, so the child starts them in the same tick. */
  requestMany<T = unknown>(
    requests: Array<{ op: string; args: Record<string, unknown> }>,
  ): Array<Promise<T>> {
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
        reject(new Error(`worker ${this.config.instanceId}: no matching event within ${timeoutMs} ms`));
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

  /**
   * Resolves once `count` events matching `predicate` arrived at or after index `from` of
   * `events`, or after `timeoutMs` (resolving false).
   */
  waitForCount(predicate: (event: WorkerEvent) => boolean, count: number, from: number, timeoutMs: number) {
    let seen = this.events.slice(from).filter(predicate).length;
    if (seen >= count) return Promise.resolve(true);
    return new Promise<boolean>((resolve) => {
      const finish = (reached: boolean) => {
        clearTimeout(timer);
        this.#listeners.delete(listener);
        resolve(reached);
      };
      const timer = setTimeout(() => finish(false), timeoutMs);
      const listener = (event: WorkerEvent) => {
        if (predicate(event) && ++seen >= count) finish(true);
      };
      this.#listeners.add(listener);
      void this.exited.then(() => finish(false));
    });
  }

  ready(timeoutMs = 120_000): Promise<WorkerEvent> {
    return Promise.race([
      this.waitForEvent((event) => event.kind === "ready", timeoutMs),
      this.exited.then(() => {
        throw new Error(
          `worker ${this.config.instanceId} exited before it was ready. stderr: ${this.#stderr}`,
        );
      }),
    ]);
  }

  /** SIGKILL: no cleanup runs in the child (no lease release, no pending writes finish). */
  async kill(): Promise<void> {
    if (!this.#gone) this.#child.kill("SIGKILL");
    await this.exited;
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

/**
 * PAI's tables on the test Postgres under `prefix`, migrated; `dispose` drops every table with
 * that prefix (and the schemas in `dropSchemas`, e.g. a job engine's) and closes the pool.
 */
export async function openPrefixedPostgres(
  prefix: string,
  poolMax: number,
): Promise<{ db: Kysely<any>; dispose(dropSchemas?: string[]): Promise<void> }> {
  const db = new Kysely<any>({
    dialect: new PostgresDialect({ pool: new pg.Pool({ connectionString: postgresUrl, max: poolMax }) }),
  });
  await migrateToLatest(db, { tablePrefix: prefix });
  return {
    db,
    async dispose(dropSchemas = []) {
      const tables = await sql<{
        tablename: string;
      }>`select tablename from pg_tables where tablename like ${`${prefix}%`}`.execute(db);
      for (const { tablename } of tables.rows)
        await sql`drop table if exists ${sql.table(tablename)} cascade`.execute(db);
      for (const schema of dropSchemas)
        await sql`drop schema if exists ${sql.id(schema)} cascade`.execute(db);
      await db.destroy();
    },
  };
}
