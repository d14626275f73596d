/**
 * Resolves once the work a mutation set in motion (a run it started, a tool it resumed) has run
 * up to its first wait on I/O. Over HTTP, building and writing the response takes a few hundred
 * microseconds of the same thread; with the answer held back one turn, the run's next commit or
 * model request is already on its way while that happens, instead of after it.
 */
export function afterStartedWork(): Promise<void> {
  return new Promise<void>((resolve) => {
    if (typeof setImmediate === "function") setImmediate(resolve);
    else setTimeout(resolve, 0);
  });
}
