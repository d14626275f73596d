import type { NotifierV1 } from "../ports/notifier.js";
import type { StorageV1 } from "../ports/storage.js";
import type { Engine } from "../runtime/engine.js";

/** What tests and benchmarks may inspect of a runtime: caches, capability facades, its storage. */
export type RuntimeInternals = {
  readonly store: {
    readonly storage: StorageV1;
    readonly cachedThreads: number;
    readonly recentThreads: number;
  };
  /** Threads whose last model-history conversion is kept (bounded; parked threads are dropped). */
  readonly history: { readonly size: number };
  readonly notifier: NotifierV1;
  readonly capabilities: { readonly size: number };
  /** Cancels the thread's active run as a trusted operator would. */
  cancelRunOf(threadId: string, reason: string | null): Promise<{ version: number }>;
  /** Acts on what is due on one thread now (deadlines, schedules), as a wake-up job would. */
  wake(threadId: string): Promise<{ resolved: number; fired: number }>;
};

/**
 * The engine behind a `Pai`, kept off its public type: users build on the service and the
 * trusted operations, so the runtime's parts can change without a breaking release. Tests and
 * benchmarks reach it through `internalsOf` (exported by `@pai/core/testing`).
 */
const engines = new WeakMap<object, Engine>();

export function attachInternals(pai: object, engine: Engine): void {
  engines.set(pai, engine);
}

/** The runtime behind a `Pai` (tests and benchmarks only; not a stable API). */
export function internalsOf(pai: object): RuntimeInternals {
  const engine = engines.get(pai);
  if (!engine) throw new TypeError("internalsOf needs a Pai created by createPai or createAgentRuntime.");
  return engine;
}
