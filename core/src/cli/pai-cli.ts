#!/usr/bin/env node
import { resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { parseArgs } from "node:util";
import { runWorkerCommand, WORKER_USAGE } from "./worker-command.js";

/**
 * `pai worker <module>`: a worker process for a PAI app whose runs go through a job engine. The
 * module exports the app's `Pai` (as `pai` or default); the worker drives its dispatched runs
 * and wakes its due threads until SIGTERM or SIGINT, then drains.
 */
async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  if (command !== "worker") {
    process.stderr.write(`${WORKER_USAGE}\n`);
    return command === undefined || command === "--help" || command === "-h" ? 0 : 2;
  }
  let parsed: ReturnType<typeof parseWorkerArgs>;
  try {
    parsed = parseWorkerArgs(rest);
  } catch (error) {
    process.stderr.write(`pai worker: ${(error as Error).message}\n\n${WORKER_USAGE}\n`);
    return 2;
  }
  return runWorkerCommand({
    ...parsed,
    // The user names the module on the command line: the one import() in core (biome.json lets
    // core/src/cli through the no-dynamic-import rule; nothing in a package entry reaches it).
    load: (path) => import(pathToFileURL(resolve(process.cwd(), path)).href),
    onSignal: (handler) => {
      process.once("SIGTERM", handler);
      process.once("SIGINT", handler);
    },
    log: (line) => process.stderr.write(`${line}\n`),
  });
}

function parseWorkerArgs(args: string[]) {
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    options: {
      export: { type: "string" },
      concurrency: { type: "string" },
      "max-per-scope": { type: "string" },
      "drain-ms": { type: "string" },
      "recovery-interval-ms": { type: "string" },
    },
  });
  if (positionals.length !== 1) throw new Error("expected exactly one module path");
  const number = (value: string | undefined, name: string) => {
    if (value === undefined) return undefined;
    const parsedNumber = Number(value);
    if (!Number.isInteger(parsedNumber)) throw new Error(`--${name} must be an integer, got "${value}"`);
    return parsedNumber;
  };
  return {
    module: positionals[0] as string,
    ...(values.export !== undefined ? { exportName: values.export } : {}),
    options: {
      ...(values.concurrency !== undefined ? { concurrency: number(values.concurrency, "concurrency") } : {}),
      ...(values["max-per-scope"] !== undefined
        ? { maxPerScope: number(values["max-per-scope"], "max-per-scope") }
        : {}),
      ...(values["drain-ms"] !== undefined ? { drainMs: number(values["drain-ms"], "drain-ms") } : {}),
      ...(values["recovery-interval-ms"] !== undefined
        ? { recoveryIntervalMs: number(values["recovery-interval-ms"], "recovery-interval-ms") }
        : {}),
    },
  };
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (error) => {
    process.stderr.write(`pai: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    process.exitCode = 1;
  },
);
