import { yieldToEventLoop } from "@pai/core/internal";

/**
 * Settles like `started`, one turn of the event loop after it did. A mutation that set work in
 * motion (a run it started, a tool it resumed) answers through this, so that work runs up to its
 * first wait on I/O before the answer is built. Over HTTP, building and writing the response
 * takes a few hundred microseconds of the same thread; this way the run's next commit or model
 * request is already on its way while that happens, instead of after it.
 */
export async function afterStartedWork<T>(started: Promise<T>, input?: { waitMs?: number }): Promise<T> {
  const result = await started;
  // A call that waited (`waitMs`) answers after the work it set going: nothing is left to go first.
  if (input?.waitMs === undefined) await yieldToEventLoop();
  return result;
}
