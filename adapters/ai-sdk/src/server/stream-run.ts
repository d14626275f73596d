import type { ActionRow, PaiService, ThreadSnapshot } from "@pai/core";
import { applyStoredEvents } from "@pai/core/protocol";
import type { UIMessageChunk } from "ai";
import { RunChunks } from "./run-chunks.js";

/**
 * Streams one run as UI message chunks: what the client lacks of `base` first, then every
 * committed change and live delta after `base`'s version (the service's `watch`, so a client
 * may reconnect to any instance on the same storage), until the run finishes or waits.
 */
export async function* streamRun<TIdentity>(input: {
  service: PaiService<TIdentity>;
  identity: TIdentity;
  base: ThreadSnapshot;
  runId: string;
  /** The client holds `base` already (it continues its assistant message after an answer). */
  delivered: boolean;
  isApproval: (action: ActionRow) => boolean;
  signal?: AbortSignal;
}): AsyncGenerator<UIMessageChunk> {
  const chunks = new RunChunks(input.runId, { isApproval: input.isApproval });
  let state = input.base;
  // Continuing after an answer: `base` was read before the answer (the run still waited), so what
  // follows starts with the answer's own commit.
  if (input.delivered) chunks.assumeDelivered(state);
  else {
    yield* chunks.fromSnapshot(state);
    if (chunks.done) return;
  }
  const stop = new AbortController();
  const onAbort = () => stop.abort();
  input.signal?.addEventListener("abort", onAbort, { once: true });
  try {
    for await (const event of input.service.threads.watch({
      identity: input.identity,
      threadId: input.base.thread.threadId,
      afterVersion: input.base.thread.version,
      signal: stop.signal,
    })) {
      if (event.type === "committed") {
        state = applyStoredEvents(state, event);
        yield* chunks.fromSnapshot(state);
      } else yield* chunks.fromLive(event.event);
      if (chunks.done) return;
    }
  } finally {
    input.signal?.removeEventListener("abort", onAbort);
    stop.abort();
  }
}
