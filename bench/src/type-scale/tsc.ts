import { spawn } from "node:child_process";
import { writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";

export type CheckResult = {
  /** `Check time` of `--extendedDiagnostics`, in seconds. */
  checkSeconds: number;
  totalSeconds: number;
  instantiations: number;
  memoryMiB: number;
};

// The repository's own compiler, so results do not depend on what `npx tsc` finds first.
const tscBin = createRequire(import.meta.url).resolve("typescript/bin/tsc");

/**
 * Writes a tsconfig for `files` in `dir`. `skipLibCheck` as most apps set it: the cost measured
 * is what checking the app's own files pulls out of the published declarations.
 */
export function writeProject(dir: string, files: string[]): void {
  const compilerOptions = {
    target: "ES2023",
    lib: ["ES2023", "DOM"],
    module: "ESNext",
    moduleResolution: "Bundler",
    strict: true,
    skipLibCheck: true,
    noEmit: true,
    isolatedModules: true,
    verbatimModuleSyntax: true,
    types: [],
  };
  writeFileSync(join(dir, "tsconfig.json"), `${JSON.stringify({ compilerOptions, files }, null, 2)}\n`);
}

function readStat(output: string, label: string): number {
  const match = new RegExp(`^${label}:\\s+([\\d.]+)`, "m").exec(output);
  if (!match) throw new Error(`tsc printed no "${label}" line:\n${output}`);
  return Number(match[1]);
}

/** Runs `tsc --noEmit --extendedDiagnostics` on the project in `dir`; type errors fail the benchmark. */
export function checkProject(dir: string): Promise<CheckResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [tscBin, "-p", dir, "--extendedDiagnostics"], {
      stdio: ["ignore", "pipe", "pipe"],
    });
    let output = "";
    child.stdout.on("data", (chunk) => {
      output += chunk;
    });
    child.stderr.on("data", (chunk) => {
      output += chunk;
    });
    child.on("error", reject);
    child.on("close", (code) => {
      if (code !== 0) {
        reject(new Error(`tsc found errors in ${dir} (exit ${code}):\n${output.slice(0, 4000)}`));
        return;
      }
      try {
        resolve({
          checkSeconds: readStat(output, "Check time"),
          totalSeconds: readStat(output, "Total time"),
          instantiations: readStat(output, "Instantiations"),
          memoryMiB: readStat(output, "Memory used") / 1024,
        });
      } catch (error) {
        reject(error);
      }
    });
  });
}
