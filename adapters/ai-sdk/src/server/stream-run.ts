import type { ActionRow, PaiService, ThreadEvent, ThreadSnapshot } from "@pai/core";
import { applyStoredEvents } from "@pai/core/protocol";
import type { UIMessageChunk } from "ai";
import { RunChunks } from "./run-chunks.js";
import { parseCursor } from "./run-cursor.js";

/**
 * A UI message chunk and its id in the stream, `<runId>:<position>`: resuming after an id
 * (`createChatStreams(pai).resume({ lastEventId })`) sends what follows it.
 */
export type ChatChunk = { id: string; chunk: UIMessageChunk };

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
  /** The client holds this run's stream up to this position (its link reconnected); `base` is current. */
  after?: string;
  /**
   * Open with a `start` chunk without a message id (the SDK changes nothing for it) that carries
   * the first position, so a link that reconnects before any content continues the run instead
   * of sending the request again. Not for a replay: the SDK resets its message on a replay's first `start`.
   */
  announce?: boolean;
  isApproval: (action: ActionRow) => boolean;
  signal?: AbortSignal;
}): AsyncGenerator<ChatChunk> {
  const chunks = new RunChunks(input.runId, { isApproval: input.isApproval });
  const id = (position: string) => `${input.runId}:${position}`;
  function* tracked(batch: UIMessageChunk[]): Generator<ChatChunk> {
    const positions = chunks.positions;
    for (let index = 0; index < batch.length; index++) {
      yield { id: id(positions[index]!), chunk: batch[index]! };
    }
  }
  const { base } = input;
  let state = base;
  if (input.after !== undefined) {
    const version = parseCursor(input.after).version;
    const since = version === undefined ? [] : await written(input, version, base.thread.version);
    chunks.resumeAt(state, input.after, since);
  } else if (input.delivered) {
    // Continuing after an answer: `base` was read before the answer (the run still waited), so
    // what follows starts with the answer's own commit.
    chunks.assumeDelivered(state);
  }
  const stop = new AbortController();
  const onAbort = () => stop.abort();
  input.signal?.addEventListener("abort", onAbort, { once: true });
  const events = input.service.threads
    .watch({
      identity: input.identity,
      threadId: base.thread.threadId,
      afterVersion: base.thread.version,
      signal: stop.signal,
    })
    [Symbol.asyncIterator]();
  // Subscribed before the first chunk goes out: the consumer may take its time to ask for more,
  // and a live delta that arrived after its step's commit would read as the next step's.
  let next = events.next();
  try {
    const first = input.delivered ? [] : chunks.fromSnapshot(state);
    if (input.announce && first.length === 0) yield { id: id(chunks.position), chunk: { type: "start" } };
    yield* tracked(first);
    while (!chunks.done) {
      const result = await next;
      if (result.done) return;
      const event = result.value;
      if (event.type === "committed") {
        state = applyStoredEvents(state, event);
        yield* tracked(chunks.fromSnapshot(state));
      } else yield* tracked(chunks.fromLive(event.event));
      next = events.next();
    }
  } finally {
    input.signal?.removeEventListener("abort", onAbort);
    stop.abort();
    // An ended stream leaves the watch's last read unawaited; it ends on the abort.
    next.catch(() => undefined);
  }
}

/** The events committed after `after` up to `upTo`, read from storage through the service. */
async function written<TIdentity>(
  input: { service: PaiService<TIdentity>; identity: TIdentity; base: ThreadSnapshot; signal?: AbortSignal },
  after: number,
  upTo: number,
): Promise<ThreadEvent[]> {
  const events: ThreadEvent[] = [];
  if (after >= upTo) return events;
  const stop = new AbortController();
  const onAbort = () => stop.abort();
  input.signal?.addEventListener("abort", onAbort, { once: true });
  try {
    for await (const event of input.service.threads.watch({
      identity: input.identity,
      threadId: input.base.thread.threadId,
      afterVersion: after,
      signal: stop.signal,
    })) {
      if (event.type !== "committed") continue;
      events.push(...event.events);
      if (event.version >= upTo) break;
    }
  } finally {
    input.signal?.removeEventListener("abort", onAbort);
    stop.abort();
  }
  return events;
}
