import type { CapabilityBinding } from "@pai/core";
import { invalidSandboxOption, sandboxFileNotFound } from "./errors.js";
import { justBashBackend } from "./just-bash-backend.js";
import type { SandboxBackend, SandboxLimits, SandboxSession } from "./sandbox-backend.js";
import type { SandboxCommandResult, SandboxFacade } from "./sandbox-capability.js";

/** Options shared by `sandboxBinding` and `sandboxPlugin`. */
export type SandboxOptions = {
  /** Where sandboxes come from. Default `justBashBackend()`. */
  backend?: SandboxBackend;
  /** Per-command limits. Defaults: 30 s, 64 KiB. */
  limits?: Partial<SandboxLimits>;
  /**
   * A thread's sandbox is disposed after the thread has had no run for this long, and at
   * runtime shutdown. Default 10 minutes.
   */
  idleTimeoutMs?: number;
};

export const DEFAULT_SANDBOX_LIMITS: SandboxLimits = { timeoutMs: 30_000, maxOutputBytes: 64 * 1024 };
export const DEFAULT_SANDBOX_IDLE_TIMEOUT_MS = 10 * 60_000;

const TIMED_OUT_EXIT_CODE = 124;

function truncate(text: string, maxBytes: number): { text: string; truncated: boolean } {
  const bytes = new TextEncoder().encode(text);
  if (bytes.length <= maxBytes) return { text, truncated: false };
  // Decoding a cut multi-byte sequence yields U+FFFD; drop it rather than show garbage.
  const kept = new TextDecoder().decode(bytes.slice(0, maxBytes)).replace(/\uFFFD$/, "");
  return { text: `${kept}\n[output truncated: ${bytes.length - maxBytes} more bytes]`, truncated: true };
}

function positive(name: string, value: number): number {
  if (!Number.isFinite(value) || value <= 0) throw invalidSandboxOption(`${name} must be a positive number.`);
  return value;
}

const sessions = new WeakMap<SandboxFacade, SandboxSession>();

/**
 * The binding of the `sandbox` capability: one sandbox per scope and thread, created on
 * first use, kept across tool calls and runs of that thread, disposed after `idleTimeoutMs`
 * without a run and when the runtime closes.
 */
export function sandboxBinding(options: SandboxOptions = {}): CapabilityBinding<SandboxFacade> {
  const backend = options.backend ?? justBashBackend();
  const limits: SandboxLimits = {
    timeoutMs: positive("limits.timeoutMs", options.limits?.timeoutMs ?? DEFAULT_SANDBOX_LIMITS.timeoutMs),
    maxOutputBytes: positive(
      "limits.maxOutputBytes",
      options.limits?.maxOutputBytes ?? DEFAULT_SANDBOX_LIMITS.maxOutputBytes,
    ),
  };
  const idleTimeoutMs = positive("idleTimeoutMs", options.idleTimeoutMs ?? DEFAULT_SANDBOX_IDLE_TIMEOUT_MS);
  return {
    lifetime: "thread",
    idleTimeoutMs,
    acquire: async (context) => {
      const session = await backend.create({ ...context, limits });
      const facade: SandboxFacade = {
        runCommand: async (input): Promise<SandboxCommandResult> => {
          if (typeof input?.command !== "string") {
            throw new TypeError("sandbox.runCommand needs { command: string }.");
          }
          const started = Date.now();
          const deadline = AbortSignal.timeout(limits.timeoutMs);
          const signal = input.signal ? AbortSignal.any([input.signal, deadline]) : deadline;
          // A backend that ignores its signal still cannot hold the tool call past the limit.
          let timer: ReturnType<typeof setTimeout> | undefined;
          const backstop = new Promise<"timeout">((resolve) => {
            timer = setTimeout(() => resolve("timeout"), limits.timeoutMs + 1_000);
          });
          try {
            const raced = await Promise.race([
              session.exec({
                command: input.command,
                ...(input.cwd ? { cwd: input.cwd } : {}),
                ...(input.env ? { env: input.env } : {}),
                ...(input.stdin !== undefined ? { stdin: input.stdin } : {}),
                signal,
                timeoutMs: limits.timeoutMs,
              }),
              backstop,
            ]);
            const result =
              raced === "timeout" ? { stdout: "", stderr: "", exitCode: TIMED_OUT_EXIT_CODE } : raced;
            const timedOut =
              raced === "timeout" ||
              (result.exitCode === TIMED_OUT_EXIT_CODE && Date.now() - started >= limits.timeoutMs);
            const stdout = truncate(result.stdout, limits.maxOutputBytes);
            const stderr = truncate(
              timedOut && result.stderr === ""
                ? `Command stopped after ${limits.timeoutMs} ms.`
                : result.stderr,
              limits.maxOutputBytes,
            );
            return {
              stdout: stdout.text,
              stderr: stderr.text,
              exitCode: result.exitCode,
              timedOut,
              truncated: stdout.truncated || stderr.truncated,
            };
          } finally {
            clearTimeout(timer);
          }
        },
        readFile: async ({ path }) => {
          try {
            return await session.readFile(path);
          } catch (error) {
            throw sandboxFileNotFound(path, error);
          }
        },
        writeFile: ({ path, content }) => session.writeFile(path, content),
      };
      sessions.set(facade, session);
      return Object.freeze(facade);
    },
    release: async (facade) => {
      await sessions.get(facade)?.dispose?.();
      sessions.delete(facade);
    },
  };
}
