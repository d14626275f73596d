import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { runWorkerCommand } from "../../src/cli/worker-command.js";

const cli = fileURLToPath(new URL("../../dist/cli.js", import.meta.url));
const app = fileURLToPath(new URL("./fixtures/worker-app.mjs", import.meta.url));
const memoryDist = fileURLToPath(new URL("../../../adapters/storage-memory/dist/index.js", import.meta.url));
// The process tests run the built CLI; under CI (which builds first) a missing build fails them.
const built = (existsSync(cli) && existsSync(memoryDist)) || process.env.CI === "true";

describe("pai worker", () => {
  it("starts the exported app's worker, drains on a signal, then closes the app", async () => {
    const calls: string[] = [];
    let signal!: () => void;
    const app = {
      startWorker: async (options: unknown) => {
        calls.push(`start ${JSON.stringify(options)}`);
        return { active: 0, stop: async () => void calls.push("stop") };
      },
      close: async () => void calls.push("close"),
    };
    const logs: string[] = [];
    const done = runWorkerCommand({
      module: "./app.js",
      options: { concurrency: 4 },
      load: async () => ({ default: app }),
      onSignal: (handler) => {
        signal = handler;
      },
      log: (line) => logs.push(line),
    });
    await new Promise((resolve) => setTimeout(resolve, 10));
    expect(calls).toEqual(['start {"concurrency":4}']);
    signal();
    expect(await done).toBe(0);
    expect(calls).toEqual(['start {"concurrency":4}', "stop", "close"]);
    expect(logs.at(-1)).toBe("pai worker: stopped");
  });

  it("says what to export when the module has no app", async () => {
    const logs: string[] = [];
    const code = await runWorkerCommand({
      module: "./nothing.js",
      options: {},
      load: async () => ({ other: 1 }),
      onSignal: () => undefined,
      log: (line) => logs.push(line),
    });
    expect(code).toBe(2);
    expect(logs[0]).toContain("exports no PAI app as pai or default");
  });

  it.runIf(built)("runs as a process and exits 0 after SIGTERM", { timeout: 30_000 }, async () => {
    const child = spawn(process.execPath, [cli, "worker", app, "--concurrency", "2"], {
      stdio: ["ignore", "ignore", "pipe"],
    });
    let stderr = "";
    let signalled = false;
    child.stderr.on("data", (chunk) => {
      stderr += String(chunk);
      // Once: a second SIGTERM is the usual "stop now" and ends the process at once.
      if (!signalled && stderr.includes("started")) {
        signalled = true;
        child.kill("SIGTERM");
      }
    });
    const code = await new Promise<number | null>((resolve) => child.on("exit", resolve));
    expect(stderr).toContain("pai worker: stopped");
    expect(code).toBe(0);
  });

  it.runIf(built)("refuses bad flags with the usage and exit code 2", { timeout: 30_000 }, async () => {
    const child = spawn(process.execPath, [cli, "worker", app, "--concurrency", "lots"], {
      stdio: ["ignore", "ignore", "pipe"],
    });
    let stderr = "";
    child.stderr.on("data", (chunk) => {
      stderr += String(chunk);
    });
    const code = await new Promise<number | null>((resolve) => child.on("exit", resolve));
    expect(code).toBe(2);
    expect(stderr).toContain("--concurrency must be an integer");
    expect(stderr).toContain("Usage: pai worker");
  });
});
