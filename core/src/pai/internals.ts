import type { Engine } from "../runtime/engine.js";

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
export function internalsOf(pai: object): Engine {
  const engine = engines.get(pai);
  if (!engine) throw new TypeError("internalsOf needs a Pai created by createPai or createAgentRuntime.");
  return engine;
}
