import { spawn } from "node:child_process";
import { mkdir, rm } from "node:fs/promises";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import type { DispatchJob } from "@pai/core";
import { pgBossDispatch } from "@pai/dispatch-pgboss";
import { build } from "esbuild";
import { afterAll, describe, expect, it } from "vitest";
import { openTestBoss, postgresUrl, uniqueQueue, until } from "./postgres.js";

const schema = "pai_boss_killed";
// Supervises every second (pg-boss's default is a minute), so the heartbeat alone sets how long
// an abandoned job takes to come back.
const admin = await openTestBoss(schema, { superviseIntervalSeconds: 1, monitorIntervalSeconds: 1 });
const queues = new Set<string>();

afterAll(async () => {
  if (!admin) return;
  for (const queue of queues) await admin.deleteQueue(queue);
  await admin.stop();
});

const path = (relative: string) => fileURLToPath(new URL(relative, import.meta.url));

/** Bundles the worker fixture with the adapter's and core's sources, next to the repo's node_modules. */
async function bundleWorker(): Promise<string> {
  const outDir = path("../test-artifacts/");
  await mkdir(outDir, { recursive: true });
  const outfile = `${outDir}hanging-worker-${globalThis.crypto.randomUUID()}.mjs`;
  await build({
    entryPoints: [path("./fixtures/hanging-worker.ts")],
    outfile,
    bundle: true,
    platform: "node",
    format: "esm",
    target: "node22",
    packages: "external",
    alias: { "@pai/core": path("../../../core/src/index.ts") },
    logLevel: "silent",
  });
  return outfile;
}

describe.skipIf(admin === null)("pgBossDispatch: a worker process killed mid-job", () => {
  it("hands its job to another worker once the job's heartbeat is stale", { timeout: 60_000 }, async () => {
    const queue = uniqueQueue("killed");
    queues.add(queue);
    const bundle = await bundleWorker();
    const child = spawn(process.execPath, [bundle], {
      env: {
        ...process.env,
        NODE_NO_WARNINGS: "1",
        PAI_PGBOSS_WORKER: JSON.stringify({ url: postgresUrl, schema, queue }),
      },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stderr = "";
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => {
      stderr = (stderr + chunk).slice(-4_000);
    });
    const exited = new Promise<NodeJS.Signals | null>((resolve) =>
      child.on("exit", (_, signal) => resolve(signal)),
    );
    const childSaw: DispatchJob[] = [];
    createInterface({ input: child.stdout }).on("line", (line) => {
      const message = JSON.parse(line) as { type: string; job?: DispatchJob };
      if (message.type === "job" && message.job) childSaw.push(message.job);
    });

    const dispatch = pgBossDispatch({
      boss: admin!,
      queue,
      heartbeatSeconds: 10,
      pollingIntervalSeconds: 0.5,
    });
    try {
      const job: DispatchJob = { kind: "run", threadId: "t-killed", runId: "r-killed", scopeKey: "s" };
      await dispatch.send(job);
      await until(() => childSaw.length > 0, 20_000, "the child to take the job").catch((error: unknown) => {
        throw new Error(`${String(error)} Child stderr: ${stderr}`);
      });
      expect(childSaw).toEqual([job]);

      // SIGKILL: no stop, no fail, no last heartbeat. The job stays active in Postgres.
      child.kill("SIGKILL");
      expect(await exited).toBe("SIGKILL");
      const killedAt = Date.now();

      const seen: DispatchJob[] = [];
      const worker = await dispatch.work(async (delivered) => void seen.push(delivered), { concurrency: 1 });
      await until(() => seen.length > 0, 30_000, "the abandoned job to come back");
      await worker.stop();
      expect(seen).toEqual([job]);
      // Stale after at most 10 s of heartbeat, then one supervise pass and the first retry delay.
      expect(Date.now() - killedAt).toBeLessThan(20_000);
    } finally {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
      await dispatch.close();
      await rm(bundle, { force: true });
    }
  });
});
