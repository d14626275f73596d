import { Bash, type BashOptions, type InitialFiles } from "just-bash";
import type { SandboxBackend } from "./sandbox-backend.js";

/** Options of the default backend. */
export type JustBashBackendOptions = {
  /** Files every new sandbox starts with, by absolute path. */
  files?: InitialFiles;
  /** Working directory of commands. Default `/workspace`. */
  cwd?: string;
  /** Environment every command starts with. */
  env?: Record<string, string>;
  /** Extra just-bash execution limits (loop counts, filesystem size, ...). */
  executionLimits?: BashOptions["executionLimits"];
};

/**
 * The default backend: `just-bash`, a bash interpreter written in TypeScript over an
 * in-memory filesystem. It never touches the host filesystem, spawns no processes and has
 * no network access, so each sandbox is a plain object that disposing simply drops.
 */
export function justBashBackend(options: JustBashBackendOptions = {}): SandboxBackend {
  return {
    name: "just-bash",
    create: ({ limits }) => {
      const bash = new Bash({
        cwd: options.cwd ?? "/workspace",
        ...(options.files ? { files: options.files } : {}),
        ...(options.env ? { env: options.env } : {}),
        // The interpreter checks its own deadline between statements, which also stops busy
        // loops that never yield to the event loop (a timer could not).
        executionLimits: { ...options.executionLimits, maxExecutionTimeMs: limits.timeoutMs },
      });
      return {
        exec: async (input) => {
          const result = await bash.exec(input.command, {
            signal: input.signal,
            ...(input.cwd ? { cwd: input.cwd } : {}),
            ...(input.env ? { env: input.env } : {}),
            ...(input.stdin !== undefined ? { stdin: input.stdin } : {}),
          });
          return { stdout: result.stdout, stderr: result.stderr, exitCode: result.exitCode };
        },
        readFile: (path) => bash.readFile(path),
        writeFile: (path, content) => bash.writeFile(path, content),
      };
    },
  };
}
