import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import type { PaiTransport } from "@pai/client";
import { INTERRUPTED_TEXT, type ThreadEvent, type ThreadSnapshot, type WatchEvent } from "@pai/core";
import { tableNames } from "@pai/storage-kysely";
import { createTrpcTransport } from "@pai/transport-trpc/client";
import { EventSource } from "eventsource";
import pg from "pg";
import superjson from "superjson";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parse } from "yaml";

/**
 * The deployment example (`deploy/`) as local processes: the Compose file's two app services and
 * its proxy, started with the commands and environment Compose would give them (only addresses,
 * the table prefix, the notify channel and the lease/recovery timings are changed), on the real
 * Postgres of `PAI_TEST_POSTGRES_URL`. Docker itself is not needed.
 *
 * The app processes import the built packages (`dist/`), like the image does: run `npm run build`
 * first (the root `npm test` does). Without a reachable Postgres the suite is skipped locally and
 * fails under `CI=true`.
 */

const root = resolve(dirname(fileURLToPath(import.meta.url)), "..", "..");
const deployDir = join(root, "deploy");
const postgresUrl = process.env.PAI_TEST_POSTGRES_URL ?? "postgres://postgres@127.0.0.1:5432/test";
const LEASE_MS = 1_000;
const RECOVERY_INTERVAL_MS = 300;

type ComposeService = {
  build?: { context: string; dockerfile: string };
  image?: string;
  command?: string[];
  environment?: Record<string, string | number>;
  volumes?: string[];
  ports?: string[];
  depends_on?: Record<string, { condition: string }>;
};
type ComposeFile = { services: Record<string, ComposeService> };

/** Compose's `${NAME:-default}` / `${NAME}` as on a host where NAME is unset (no model key: the demo model). */
const interpolate = (value: string) =>
  value.replace(/\$\{(\w+)(?::?-([^}]*))?\}/g, (_match, _name, fallback?: string) => fallback ?? "");

const environmentOf = (service: ComposeService): Record<string, string> =>
  Object.fromEntries(
    Object.entries(service.environment ?? {}).map(([key, value]) => [key, interpolate(String(value))]),
  );

/**
 * Where a service's command runs on this machine. The app image copies the repository (its build
 * context) into its WORKDIR, so relative paths are relative to the repository root; a file the
 * service mounts as a volume is read from its source next to the Compose file.
 */
function localCommand(name: string, service: ComposeService, dockerfile: string): string[] {
  const [program, ...args] = service.command ?? [];
  expect(program, `${name} runs node`).toBe("node");
  const mounts = new Map(
    (service.volumes ?? []).map((volume) => {
      const [source, target] = volume.split(":");
      return [target, resolve(deployDir, source)];
    }),
  );
  return args.map((arg) => {
    if (mounts.has(arg)) return mounts.get(arg)!;
    if (arg.startsWith("/")) throw new Error(`${name}: ${arg} is neither mounted nor in the image`);
    expect(service.build, `${name} runs ${arg} from the image built from the repository`).toBeDefined();
    expect(resolve(deployDir, service.build!.context)).toBe(root);
    expect(dockerfile).toMatch(/^WORKDIR \/app$/m);
    expect(dockerfile).toMatch(/^COPY \. \.$/m);
    return join(root, arg);
  });
}

/** A service started as a child process; its stdout is JSON lines (see deploy/app/server.mjs). */
/** Matches the log line of one runtime event of a run. */
const runtimeEvent = (runId: string, type: string) => (line: Record<string, unknown>) =>
  line.msg === "runtime" && line.runId === runId && line.type === type;

class ServiceProcess {
  readonly lines: Array<Record<string, unknown>> = [];
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  readonly #child: ChildProcessWithoutNullStreams;
  readonly #listeners = new Set<() => void>();
  #stderr = "";
  #gone = false;

  constructor(
    readonly name: string,
    args: string[],
    env: Record<string, string>,
  ) {
    this.#child = spawn(process.execPath, args, {
      cwd: root,
      env: { PATH: process.env.PATH ?? "", ...env },
      stdio: ["pipe", "pipe", "pipe"],
    });
    this.#child.stderr.setEncoding("utf8");
    this.#child.stderr.on("data", (chunk: string) => {
      this.#stderr = (this.#stderr + chunk).slice(-4000);
    });
    createInterface({ input: this.#child.stdout }).on("line", (line) => {
      try {
        this.lines.push(JSON.parse(line) as Record<string, unknown>);
      } catch {
        this.lines.push({ msg: "text", line });
      }
      for (const listener of this.#listeners) listener();
    });
    this.exited = new Promise((resolveExit) => {
      this.#child.on("exit", (code, signal) => {
        this.#gone = true;
        for (const listener of this.#listeners) listener();
        resolveExit({ code, signal });
      });
    });
  }

  /** The first stdout line matching `predicate`, or an error naming the service (with its stderr). */
  waitFor(predicate: (line: Record<string, unknown>) => boolean, timeoutMs = 20_000) {
    return new Promise<Record<string, unknown>>((resolveLine, reject) => {
      const check = () => {
        const found = this.lines.find(predicate);
        if (found) return finish(() => resolveLine(found));
        if (this.#gone) finish(() => reject(new Error(`${this.name} exited. stderr: ${this.#stderr}`)));
      };
      const timer = setTimeout(
        () => finish(() => reject(new Error(`${this.name}: no matching log line in ${timeoutMs} ms`))),
        timeoutMs,
      );
      const finish = (settle: () => void) => {
        clearTimeout(timer);
        this.#listeners.delete(check);
        settle();
      };
      this.#listeners.add(check);
      check();
    });
  }

  async port(): Promise<number> {
    return Number((await this.waitFor((line) => line.msg === "listening")).port);
  }

  /** Runtime events this instance logged for one run (its observers log every event, ids only). */
  events(runId: string): string[] {
    return this.lines
      .filter((line) => line.msg === "runtime" && line.runId === runId)
      .map((line) => String(line.type));
  }

  signal(signal: NodeJS.Signals) {
    if (!this.#gone) this.#child.kill(signal);
    return this.exited;
  }

  get stderr() {
    return this.#stderr;
  }
}

/** A background watch of one thread: every event it received, and a way to wait for one. */
function watch(transport: PaiTransport, threadId: string) {
  const controller = new AbortController();
  const items: WatchEvent[] = [];
  const listeners = new Set<() => void>();
  let failure: unknown = null;
  const done = (async () => {
    try {
      for await (const item of transport.threads.watch({ threadId, signal: controller.signal })) {
        items.push(item);
        for (const listener of listeners) listener();
      }
    } catch (error) {
      if (!controller.signal.aborted) failure = error;
    }
    for (const listener of listeners) listener();
  })();
  const committed = () =>
    items.flatMap((item) =>
      item.type === "committed" ? [{ version: item.version, events: item.events }] : [],
    );
  const events = () => committed().flatMap((batch) => batch.events);
  /** Resolves with the first committed event `pick` returns something for. */
  const until = <T>(pick: (event: ThreadEvent) => T | undefined, what: string, timeoutMs = 20_000) =>
    new Promise<T>((resolveEvent, reject) => {
      const check = () => {
        for (const event of events()) {
          const picked = pick(event);
          if (picked !== undefined) return finish(() => resolveEvent(picked));
        }
        if (failure) finish(() => reject(failure));
      };
      const timer = setTimeout(
        () => finish(() => reject(new Error(`watch of ${threadId}: no ${what} within ${timeoutMs} ms`))),
        timeoutMs,
      );
      const finish = (settle: () => void) => {
        clearTimeout(timer);
        listeners.delete(check);
        settle();
      };
      listeners.add(check);
      check();
    });
  return {
    committed,
    until,
    pendingAction: (runId: string) =>
      until(
        (event) =>
          event.type === "action-upserted" && event.action.runId === runId && event.action.state === "pending"
            ? event.action
            : undefined,
        `pending action of run ${runId}`,
      ),
    runEnded: (runId: string, timeoutMs?: number) =>
      until(
        (event) =>
          event.type === "run-upserted" &&
          event.run.runId === runId &&
          ["completed", "failed", "cancelled"].includes(event.run.status)
            ? event.run
            : undefined,
        `end of run ${runId}`,
        timeoutMs,
      ),
    async stop() {
      controller.abort();
      await done;
    },
  };
}

const toolParts = (snapshot: ThreadSnapshot) =>
  snapshot.messages.flatMap((row) =>
    (
      row.message.parts as Array<{ type: string; state?: string; errorText?: string; toolCallId?: string }>
    ).filter((part) => part.type.startsWith("tool-")),
  );

const lastAssistantText = (snapshot: ThreadSnapshot) => {
  const message = [...snapshot.messages].reverse().find((row) => row.role === "assistant");
  const parts = (message?.message.parts ?? []) as Array<{ type: string; text?: string }>;
  const lastStep = parts.map((part) => part.type).lastIndexOf("step-start");
  return parts
    .slice(lastStep + 1)
    .filter((part) => part.type === "text")
    .map((part) => part.text)
    .join("");
};

/** Versions a watcher received are exactly 1..n: nothing lost, nothing twice. */
const expectContiguous = (versions: number[]) =>
  expect(versions).toEqual(Array.from({ length: versions.length }, (_, index) => index + 1));

async function postgresProblem(): Promise<string | null> {
  const client = new pg.Client({ connectionString: postgresUrl, connectionTimeoutMillis: 3_000 });
  try {
    await client.connect();
    await client.query("select 1");
    return null;
  } catch (error) {
    return `Postgres at ${postgresUrl} is unreachable (${(error as Error).message}); set PAI_TEST_POSTGRES_URL or start the server`;
  } finally {
    await client.end().catch(() => {});
  }
}

describe("deployment example: two instances on Postgres behind a round-robin proxy", async () => {
  const compose = parse(readFileSync(join(deployDir, "docker-compose.yml"), "utf8"), {
    merge: true,
  }) as ComposeFile;
  const dockerfile = readFileSync(join(deployDir, "Dockerfile"), "utf8");

  it("the Compose file describes Postgres, two identical app instances and a proxy in front of them", () => {
    const { postgres, app1, app2, proxy } = compose.services;
    expect(postgres?.image).toMatch(/^postgres:/);
    for (const app of [app1, app2]) {
      expect(app?.build).toEqual({ context: "..", dockerfile: "deploy/Dockerfile" });
      expect(app?.command).toEqual(JSON.parse(/^CMD (.+)$/m.exec(dockerfile)![1]));
      expect(app?.depends_on?.postgres?.condition).toBe("service_healthy");
    }
    // The instances differ only in their name.
    const { PAI_INSTANCE_ID: first, ...shared1 } = environmentOf(app1!);
    const { PAI_INSTANCE_ID: second, ...shared2 } = environmentOf(app2!);
    expect([first, second]).toEqual(["app1", "app2"]);
    expect(shared1).toEqual(shared2);
    expect(new URL(shared1.DATABASE_URL!).hostname).toBe("postgres");
    expect(shared1.NODE_ENV).toBe("production");
    expect(shared1.OPENAI_API_KEY).toBe(""); // no key on this host: the deterministic demo model
    // The proxy forwards to exactly the two instances, on the port they listen on.
    expect(environmentOf(proxy!).UPSTREAMS).toBe(`http://app1:${shared1.PORT},http://app2:${shared2.PORT}`);
    expect(proxy?.ports).toEqual([`${environmentOf(proxy!).PORT}:${environmentOf(proxy!).PORT}`]);
  });

  const problem = await postgresProblem();
  if (problem) {
    if (process.env.CI === "true") throw new Error(problem);
    console.warn(`[deployment] skipping: ${problem}`);
    it.skip(`skipped: ${problem}`, () => {});
    return;
  }

  const prefix = `pai_deploy_${globalThis.crypto.randomUUID().slice(0, 8)}_`;
  const pool = new pg.Pool({ connectionString: postgresUrl, max: 2 });
  const processes: ServiceProcess[] = [];
  let app1: ServiceProcess;
  let app2: ServiceProcess;
  let proxy: ServiceProcess;
  const urls = { app1: "", app2: "", proxy: "" };
  const started = Date.now();
  const timings: string[] = [];
  const mark = (label: string) => timings.push(`${label} ${((Date.now() - started) / 1000).toFixed(1)} s`);

  /** A service of the Compose file as a local process, with only the given settings replaced. */
  const startService = (name: string, overrides: Record<string, string>) => {
    const service = compose.services[name]!;
    const environment = environmentOf(service);
    for (const key of Object.keys(overrides)) {
      expect(environment, `${name} sets ${key} in docker-compose.yml`).toHaveProperty(key);
    }
    const child = new ServiceProcess(name, localCommand(name, service, dockerfile), {
      ...environment,
      ...overrides,
    });
    processes.push(child);
    return child;
  };

  const client = (baseUrl: string, token = "ana-token") =>
    createTrpcTransport({
      url: `${baseUrl}/trpc`,
      transformer: superjson,
      headers: { authorization: `Bearer ${token}` },
      EventSource,
    });

  beforeAll(async () => {
    const required = [
      "core/dist/index.js",
      "core/dist/testing/index.js",
      "adapters/storage-kysely/dist/index.js",
      "client/dist/index.js",
      "adapters/transport-trpc/dist/index.js",
    ];
    const missing = required.filter((path) => !existsSync(join(root, path)));
    if (missing.length > 0) {
      throw new Error(
        `The app processes import the built packages; ${missing.join(", ")} is missing. Run npm run build.`,
      );
    }
    expect(Number(process.versions.node.split(".")[0])).toBeGreaterThanOrEqual(22);

    const appOverrides = {
      DATABASE_URL: postgresUrl,
      PORT: "0",
      HOST: "127.0.0.1",
      PAI_TABLE_PREFIX: prefix,
      PAI_NOTIFY_CHANNEL: `${prefix}notify`,
      PAI_LEASE_MS: String(LEASE_MS),
      PAI_RECOVERY_INTERVAL_MS: String(RECOVERY_INTERVAL_MS),
    };
    // Both start at once: both run the migrations, serialized by the migrator's advisory lock.
    app1 = startService("app1", appOverrides);
    app2 = startService("app2", appOverrides);
    const [port1, port2] = await Promise.all([app1.port(), app2.port()]);
    urls.app1 = `http://127.0.0.1:${port1}`;
    urls.app2 = `http://127.0.0.1:${port2}`;
    proxy = startService("proxy", { UPSTREAMS: `${urls.app1},${urls.app2}`, PORT: "0", HOST: "127.0.0.1" });
    urls.proxy = `http://127.0.0.1:${await proxy.port()}`;
    mark("started");
  }, 60_000);

  afterAll(async () => {
    await Promise.all(
      processes.map(async (child) => {
        const timer = setTimeout(() => void child.signal("SIGKILL"), 10_000);
        await child.signal("SIGTERM");
        clearTimeout(timer);
      }),
    );
    for (const table of Object.values(tableNames(prefix))) {
      await pool.query(`drop table if exists "${table}"`);
    }
    await pool.end();
    mark("cleaned up");
    console.log(`[deployment] ${timings.join(", ")}`);
  }, 30_000);

  it("the proxy spreads requests over both instances", async () => {
    const served: string[] = [];
    for (let index = 0; index < 4; index++) {
      const response = await fetch(`${urls.proxy}/healthz`);
      expect(response.status).toBe(200);
      served.push(response.headers.get("x-pai-instance")!);
    }
    expect(served).toEqual(["app1", "app2", "app1", "app2"]);
  });

  it("a run started on instance 1 waits on an approval; the answer given on instance 2 completes it, and a watcher on instance 2 sees every commit", async () => {
    const one = client(urls.app1);
    const two = client(urls.app2);
    const { threadId } = await one.threads.create({});
    const watcher = watch(two, threadId);
    try {
      const { runId } = await one.threads.send({
        threadId,
        message: { text: "Please approve the release of v2" },
      });
      // Instance 1 drives the run to the wait point; the watcher on instance 2 receives those commits.
      const action = await watcher.pendingAction(runId);
      expect(action.name).toBe("requestApproval.approval");
      expect(action.input).toEqual({ prompt: "Please approve the release of v2" });
      // An instance logs an event after the commit the watcher sees: its line may come later.
      await app1.waitFor(runtimeEvent(runId, "suspend"));
      expect(app1.events(runId)).toEqual(expect.arrayContaining(["run-start", "tool-start", "suspend"]));
      expect(app2.events(runId)).toEqual([]);

      await two.actions.submit({ threadId, actionId: action.actionId, payload: { approved: true } });
      const run = await watcher.runEnded(runId);
      expect(run.status).toBe("completed");
      // The submit's commit took the run's lease, so instance 2 resumed and finished it.
      await app2.waitFor(runtimeEvent(runId, "run-end"));
      expect(app2.events(runId)).toEqual(
        expect.arrayContaining(["action-resolved", "tool-start", "run-end"]),
      );
      expect(app1.events(runId)).not.toContain("run-end");

      const snapshot = await one.threads.get({ threadId });
      expect(lastAssistantText(snapshot)).toBe("Approved, carrying on.");
      expect(toolParts(snapshot).map((part) => part.state)).toEqual(["output-available"]);
      const versions = watcher.committed().map((batch) => batch.version);
      expectContiguous(versions);
      expect(versions.at(-1)).toBe(snapshot.thread.version);
    } finally {
      await watcher.stop();
    }
    mark("approval across instances");
  });

  it("through the proxy every call may land on another instance; scope and sign-in still hold", async () => {
    const ana = client(urls.proxy);
    const { threadId } = await ana.threads.create({});
    const watcher = watch(ana, threadId); // an SSE stream through the proxy
    try {
      const { runId } = await ana.threads.send({
        threadId,
        message: { text: "approve the database upgrade" },
      });
      const action = await watcher.pendingAction(runId);
      // Another user of the same org answers; calls alternate between the instances.
      const bob = client(urls.proxy, "bob-token");
      expect((await bob.actions.list({ state: "pending" })).items.map((item) => item.actionId)).toContain(
        action.actionId,
      );
      await bob.actions.submit({ threadId, actionId: action.actionId, payload: { approved: false } });
      expect((await watcher.runEnded(runId)).status).toBe("completed");
      expect(lastAssistantText(await ana.threads.get({ threadId }))).toBe(
        "Not approved, nothing was changed.",
      );
      expectContiguous(watcher.committed().map((batch) => batch.version));
    } finally {
      await watcher.stop();
    }
    // Another org sees nothing of it, on either instance; no sign-in is refused before PAI.
    const eve = client(urls.proxy, "eve-token");
    for (let attempt = 0; attempt < 2; attempt++) {
      await expect(eve.threads.get({ threadId })).rejects.toMatchObject({ code: "NOT_FOUND" });
    }
    await expect(client(urls.proxy, "no-such-token").threads.list({})).rejects.toMatchObject({
      code: "FORBIDDEN",
      message: "Sign in first.",
    });
    mark("through the proxy");
  });

  it("after instance 1 is killed mid-run, instance 2's recovery adopts the run; the interrupted tool call is not run again", async () => {
    const one = client(urls.app1);
    const two = client(urls.app2);
    const { threadId } = await one.threads.create({});
    const watcher = watch(two, threadId);
    try {
      const { runId } = await one.threads.send({ threadId, message: { text: "run a task for 600 seconds" } });
      // The long task is executing on instance 1 once its first progress write is committed.
      const progress = await watcher.until(
        (event) => (event.type === "tool-data-upserted" ? event.item : undefined),
        "progress of the long task",
      );
      expect(progress.value).toEqual({ done: 0, total: 600 });
      expect(app1.events(runId)).toContain("tool-start");

      const killed = Date.now();
      expect((await app1.signal("SIGKILL")).signal).toBe("SIGKILL");
      const run = await watcher.runEnded(runId, 20_000);
      const adoptedAfterMs = Date.now() - killed;
      mark(`crash adopted after ${(adoptedAfterMs / 1000).toFixed(1)} s`);
      expect(run.status).toBe("completed");
      // Within the lease plus a few recovery intervals (no process restarted anything).
      expect(adoptedAfterMs).toBeLessThan(LEASE_MS + 10 * RECOVERY_INTERVAL_MS + 5_000);

      const snapshot = await two.threads.get({ threadId });
      const [part] = toolParts(snapshot);
      expect(part).toMatchObject({
        type: "tool-longTask",
        state: "output-error",
        errorText: INTERRUPTED_TEXT,
      });
      expect(lastAssistantText(snapshot)).toBe(`longTask did not finish: ${INTERRUPTED_TEXT}`);
      // Instance 2 recorded the interruption and issued the next model step; the tool never ran there.
      await app2.waitFor(runtimeEvent(runId, "run-end"));
      const adopted = app2.events(runId);
      expect(adopted).toEqual(expect.arrayContaining(["step-start", "model-start", "run-end"]));
      expect(adopted).not.toContain("tool-start");
      const table = tableNames(prefix).runs;
      const { rows } = await pool.query(`select lease_owner from "${table}" where run_id = $1`, [runId]);
      expect(rows).toEqual([{ lease_owner: "app2" }]);
      // The watcher on instance 2 never noticed the crash: every version, once.
      const versions = watcher.committed().map((batch) => batch.version);
      expectContiguous(versions);
      expect(versions.at(-1)).toBe(snapshot.thread.version);
    } finally {
      await watcher.stop();
    }
  });

  it("the survivors shut down cleanly on SIGTERM", async () => {
    for (const child of [proxy, app2]) {
      const exit = await child.signal("SIGTERM");
      expect(exit, `${child.name} stderr: ${child.stderr}`).toEqual({ code: 0, signal: null });
    }
    expect(app2.lines.some((line) => line.msg === "stopped")).toBe(true);
  });
});
