import type { PaiWorker, WorkerOptions } from "../runtime/run-worker.js";

export const WORKER_USAGE = `Usage: pai worker <module> [options]

Drives the dispatched runs of the PAI app that <module> exports (as "pai" or default), until
SIGTERM or SIGINT; then stops taking jobs, waits for runs in flight (--drain-ms), and hands
back what is left.

Options:
  --export <name>              the export that holds the app (default: pai, then default)
  --concurrency <n>            jobs worked at once (default 10)
  --max-per-scope <n>          slots one scope (tenant) may hold (default: no limit)
  --drain-ms <n>               how long shutdown waits for runs in flight (default 30000)
  --recovery-interval-ms <n>   how often to adopt runs of dead workers (default 5000)`;

type Startable = {
  startWorker(options?: WorkerOptions): Promise<PaiWorker>;
  close(): Promise<void>;
};

function isStartable(value: unknown): value is Startable {
  return (
    typeof value === "object" &&
    value !== null &&
    typeof (value as Startable).startWorker === "function" &&
    typeof (value as Startable).close === "function"
  );
}

/** The worker command, with its I/O injected (the CLI passes the process's; tests their own). */
export async function runWorkerCommand(input: {
  module: string;
  exportName?: string;
  options: WorkerOptions;
  load: (path: string) => Promise<Record<string, unknown>>;
  onSignal: (handler: () => void) => void;
  log: (line: string) => void;
}): Promise<number> {
  const loaded = await input.load(input.module);
  const names = input.exportName ? [input.exportName] : ["pai", "default"];
  const found = names.map((name) => loaded[name]).find(isStartable);
  if (!found) {
    input.log(
      `pai worker: ${input.module} exports no PAI app as ${names.join(" or ")}. Export the value createPai() returns, e.g. \`export const pai = createPai({ ..., dispatch })\`.`,
    );
    return 2;
  }
  // Listening before the worker starts: a signal during start-up still drains, never kills.
  const signalled = new Promise<void>((resolve) => input.onSignal(resolve));
  // Held until the signal: the worker's own timers do not keep a process alive.
  const alive = setInterval(() => undefined, 1 << 30);
  const worker = await found.startWorker(input.options);
  input.log(`pai worker: started (${input.module}); SIGTERM or SIGINT drains and stops`);
  await signalled;
  clearInterval(alive);
  input.log("pai worker: draining");
  await worker.stop();
  await found.close();
  input.log("pai worker: stopped");
  return 0;
}
