import { PaiError } from "../errors/pai-error.js";
import type { RuntimeCommands } from "../runtime/runtime-commands.js";
import { applyStoredEvents, type ThreadSnapshot } from "../state/snapshot.js";
import type { SettledRun } from "./service-types.js";
import { watchThread } from "./watch-thread.js";

/** The longest a request may wait for its run (`waitMs`): about what proxies allow a request. */
export const MAX_WAIT_MS = 60_000;

export function waitMsOf(value: unknown): number | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== "number" || !Number.isInteger(value) || value < 1 || value > MAX_WAIT_MS) {
    throw new PaiError(
      "INVALID_INPUT",
      `waitMs must be a whole number of milliseconds from 1 to ${MAX_WAIT_MS} (got ${String(value).slice(0, 40)}).`,
    );
  }
  return value;
}

/**
 * A call's wait, checked before anything is written. `signal` matters only with `waitMs` (it ends
 * the wait); a value that is not an AbortSignal is refused either way.
 */
export function waitOf(input: { waitMs?: unknown; signal?: unknown }): {
  waitMs: number | undefined;
  signal: AbortSignal | undefined;
} {
  const { signal } = input;
  if (signal !== undefined && !(signal instanceof AbortSignal)) {
    throw new PaiError("INVALID_INPUT", "signal must be an AbortSignal (it ends a waitMs wait early).");
  }
  return { waitMs: waitMsOf(input.waitMs), signal };
}

/** Whether the run still has work to do: running, or queued behind another. */
function runActive(snapshot: ThreadSnapshot, runId: string): boolean {
  const run = snapshot.runs.find((candidate) => candidate.runId === runId);
  return run !== undefined && (run.status === "running" || run.status === "queued");
}

/**
 * Waits until the run has stopped (parked on pending actions, completed, failed, cancelled) in a
 * version at or after `version`, at most `waitMs`, and returns the thread as of then. When this
 * process drove the run to that point, its work ends with the commit that stopped the run and the
 * snapshot it kept of that commit is the answer, with no storage read. Otherwise (a worker of a
 * job engine drives it, or it was handed over) the thread is read and watched until the run
 * stops, as any watcher would see it.
 */
export async function settleRun(
  engine: RuntimeCommands,
  threadId: string,
  runId: string,
  version: number,
  waitMs: number,
  signal?: AbortSignal,
): Promise<SettledRun> {
  const deadline = performance.now() + waitMs;
  let timer: ReturnType<typeof setTimeout> | undefined;
  // The caller's signal ends the wait as the deadline would, only sooner. No controller on the
  // fast path: a run driven here usually stops before anything needs aborting.
  let stop = () => {};
  const stopped = new Promise<"stopped">((resolve) => {
    stop = () => resolve("stopped");
    timer = setTimeout(stop, waitMs);
  });
  const onAbort = () => stop();
  signal?.addEventListener("abort", onAbort, { once: true });
  if (signal?.aborted) stop();
  try {
    await Promise.race([engine.waitForIdle(threadId), stopped]);
    const kept = engine.store.kept(threadId);
    if (kept && kept.thread.version >= version && !runActive(kept, runId)) {
      return { done: true, snapshot: kept };
    }
    let snapshot = await engine.store.read(threadId);
    if (!snapshot) throw new PaiError("NOT_FOUND", `Thread ${threadId} was not found.`);
    if (!runActive(snapshot, runId)) return { done: true, snapshot };
    const remaining = deadline - performance.now();
    if (remaining <= 0 || signal?.aborted) return { done: false, snapshot };
    // Not stopped yet: follow the thread as a watcher until the run stops, the deadline passes
    // or the caller's signal aborts.
    const controller = new AbortController();
    stop = () => controller.abort();
    clearTimeout(timer);
    timer = setTimeout(stop, remaining);
    const current = snapshot;
    for await (const event of watchThread(
      engine,
      async () => ({ snapshot: current }),
      snapshot.thread.version,
      controller.signal,
    )) {
      if (event.type !== "committed") continue;
      snapshot = applyStoredEvents(snapshot, event);
      if (!runActive(snapshot, runId)) return { done: true, snapshot };
    }
    return { done: false, snapshot };
  } finally {
    clearTimeout(timer);
    signal?.removeEventListener("abort", onAbort);
  }
}

/** `result`, with the settled thread when the caller asked to wait (`waitMs`). */
export async function withSettled<T extends object>(
  engine: RuntimeCommands,
  result: T,
  run: { threadId: string; runId: string | null; version: number },
  waitMs: number | undefined,
  signal?: AbortSignal,
): Promise<T & { settled?: SettledRun }> {
  // A run id is null only for a thread created without a message, which takes no `waitMs`.
  if (waitMs === undefined || run.runId === null) return result;
  return {
    ...result,
    settled: await settleRun(engine, run.threadId, run.runId, run.version, waitMs, signal),
  };
}
