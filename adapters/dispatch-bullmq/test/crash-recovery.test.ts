import { spawn } from "node:child_process";
import { once } from "node:events";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import type { DispatchJob } from "@pai/core";
import { bullMqDispatch } from "@pai/dispatch-bullmq";
import { afterAll, describe, expect, it } from "vitest";
import { openTestRedis } from "./redis.js";

const redis = await openTestRedis("crash");
const workerScript = fileURLToPath(new URL("./fixtures/crash-worker.ts", import.meta.url));
const STALLED_INTERVAL_MS = 1_000;

async function until(check: () => boolean, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`Timed out after ${timeoutMs} ms waiting for ${what}.`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe.skipIf(redis === null)("a job in flight when its worker is SIGKILLed", () => {
  afterAll(async () => {
    await redis?.dispose();
  });

  it("is delivered again to another worker once the stalled check finds it", {
    timeout: 40_000,
  }, async () => {
    const features = process.features as { typescript?: string | false };
    if (!features.typescript) {
      throw new Error(
        `This test starts a child process on a .ts file with Node's type stripping, which Node ${process.versions.node} lacks; run it through npm (npx vitest) so the repo's Node 22 is used.`,
      );
    }
    const suffix = Math.random().toString(36).slice(2, 10);
    const queue = `crash_${suffix}`;
    const runId = `run-${suffix}`;
    // msgpackr's native string extractor stays off in the child: BullMQ must work on the
    // JavaScript fallback, as it does wherever msgpackr-extract's install script did not run.
    const child = spawn(process.execPath, [workerScript], {
      env: {
        ...process.env,
        MSGPACKR_NATIVE_ACCELERATION_DISABLED: "true",
        PAI_CRASH_REDIS_URL: redis!.url,
        PAI_CRASH_PREFIX: redis!.prefix,
        PAI_CRASH_QUEUE: queue,
        PAI_CRASH_RUN_ID: runId,
        PAI_CRASH_STALLED_INTERVAL_MS: String(STALLED_INTERVAL_MS),
      },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stderr = "";
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => {
      stderr += chunk;
    });
    const exited = once(child, "exit");
    const lines: Array<{ event: string; job?: DispatchJob }> = [];
    createInterface({ input: child.stdout }).on("line", (line) => lines.push(JSON.parse(line)));

    const sent: DispatchJob = { kind: "run", threadId: "thread-crash", runId, scopeKey: "scope-crash" };
    const dispatch = bullMqDispatch({
      connection: redis!.url,
      prefix: redis!.prefix,
      queue,
      stalledIntervalMs: STALLED_INTERVAL_MS,
    });
    try {
      await until(
        () => lines.some((line) => line.event === "handling") || child.exitCode !== null,
        20_000,
        "the child worker to take the job",
      );
      if (child.exitCode !== null) throw new Error(`The child worker exited early:\n${stderr}`);
      expect(lines.find((line) => line.event === "handling")?.job).toEqual(sent);

      child.kill("SIGKILL");
      const [, signal] = await exited;
      expect(signal).toBe("SIGKILL");
      const killedAt = Date.now();

      const seen: DispatchJob[] = [];
      const worker = await dispatch.work(async (job) => void seen.push(job), { concurrency: 1 });
      await until(() => seen.length > 0, 6 * STALLED_INTERVAL_MS + 5_000, "the job of the killed worker");
      const recoveredMs = Date.now() - killedAt;
      await worker.stop();
      console.log(`bullmq crash recovery: the killed worker's job came back after ${recoveredMs} ms`);
      expect(seen).toEqual([sent]);
      // Lock expiry plus at most two stalled checks, with room for a loaded machine.
      expect(recoveredMs).toBeLessThan(6 * STALLED_INTERVAL_MS + 5_000);
    } finally {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
      await dispatch.close();
    }
  });
});
