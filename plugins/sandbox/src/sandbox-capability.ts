import { defineCapability } from "@pai/core";

/** Input of `runCommand`. */
export type SandboxCommandInput = {
  /** A bash command line, run in the thread's sandbox. */
  command: string;
  /** Working directory for this command only. */
  cwd?: string;
  /** Extra environment variables for this command only. */
  env?: Record<string, string>;
  /** Standard input. */
  stdin?: string;
  /** Stops the command early (the sandbox limit applies either way). */
  signal?: AbortSignal;
};

/** What a command produced. Output beyond the plugin's `maxOutputBytes` is cut and flagged. */
export type SandboxCommandResult = {
  stdout: string;
  stderr: string;
  exitCode: number;
  /** True when the command was stopped at the time limit (exit code 124). */
  timedOut: boolean;
  /** True when stdout or stderr was cut at `maxOutputBytes`. */
  truncated: boolean;
};

/** The facade tools receive at `ctx.capabilities.sandbox`. */
export type SandboxFacade = {
  /** Runs a command. Files persist between commands; shell variables and `cd` do not. */
  runCommand(input: SandboxCommandInput): Promise<SandboxCommandResult>;
  /** Reads a text file of the sandbox. Rejects with `NOT_FOUND` when it does not exist. */
  readFile(input: { path: string }): Promise<string>;
  /** Writes a text file of the sandbox, creating parent directories. */
  writeFile(input: { path: string; content: string }): Promise<void>;
};

/**
 * The sandbox capability token. Declare it on a tool (`capabilities: { sandbox }`) and bind it
 * with `sandboxPlugin()` (or `sandboxBinding()` in `createAgentRuntime({ capabilities })`).
 * One sandbox exists per scope and thread.
 */
export const sandbox = defineCapability<SandboxFacade>()({
  id: "pai.sandbox",
  description: "An isolated shell with its own filesystem, one per conversation thread.",
});
