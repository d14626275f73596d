import type { CapabilityAcquireContext } from "@pai/core";

/** Limits every command of a sandbox is held to. */
export type SandboxLimits = {
  /** Wall-clock limit of one command, in ms. */
  timeoutMs: number;
  /** Maximum bytes kept of stdout and of stderr, each. */
  maxOutputBytes: number;
};

/** One live sandbox, owned by the binding until it is disposed. */
export type SandboxSession = {
  exec(input: {
    command: string;
    cwd?: string;
    env?: Record<string, string>;
    stdin?: string;
    signal: AbortSignal;
    timeoutMs: number;
  }): Promise<{ stdout: string; stderr: string; exitCode: number }>;
  /** Rejects when the file does not exist (any error; the facade reports it as `NOT_FOUND`). */
  readFile(path: string): Promise<string>;
  writeFile(path: string, content: string): Promise<void>;
  dispose?(): void | Promise<void>;
};

/**
 * Creates sandboxes. The default is `justBashBackend()`; a host can bind any other
 * isolation technology (a container, a microVM, a remote service) behind the same facade.
 */
export type SandboxBackend = {
  readonly name: string;
  create(
    context: Omit<CapabilityAcquireContext, "signal"> & { signal: AbortSignal; limits: SandboxLimits },
  ): SandboxSession | Promise<SandboxSession>;
};
