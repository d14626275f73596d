import type { UIMessage, UIMessageChunk } from "ai";
import type { ChatRequestBody } from "../wire.js";
import type { ConnectionOptions, PaiChatConnection } from "./pai-chat-transport.js";

/**
 * The chat protocol over tRPC, for hosts that expose nothing else: pass the `chat` procedures of
 * `createPaiRouter({ chat: createChatStreams(pai) })` from your typed client, e.g.
 * `new PaiChatTransport({ connection: trpcChatConnection(client.pai.chat) })`. Subscriptions need
 * tRPC's `httpSubscriptionLink` (SSE). Every chunk is `tracked` with its position in the run, so
 * when the link reconnects (a dropped connection, a restarted server, another instance on the same
 * storage) the stream continues after the last chunk the chat received, without `resumeStream()`.
 */
type Subscribe = (
  input: never,
  options: {
    signal?: AbortSignal;
    onData(data: unknown): void;
    onError(error: unknown): void;
    onComplete?(): void;
    onStopped?(): void;
  },
) => { unsubscribe(): void };

export type TrpcChatProcedures = {
  send: { subscribe: Subscribe };
  resume: { subscribe: Subscribe };
  messages: { query(input: { threadId: string }, options?: { signal?: AbortSignal }): Promise<unknown[]> };
  /** The messages with their thread version (a router of this version has it). */
  held?: {
    query(
      input: { threadId: string },
      options?: { signal?: AbortSignal },
    ): Promise<{ messages: unknown[]; version: number }>;
  };
};

export function trpcChatConnection(chat: TrpcChatProcedures): PaiChatConnection {
  return {
    send: async (body: ChatRequestBody, options: ConnectionOptions) =>
      stream(chat.send.subscribe, body, options),
    answer: async (body: ChatRequestBody, options: ConnectionOptions) => {
      const reader = stream(chat.send.subscribe, body, options).getReader();
      while (!(await reader.read()).done) {
        // An answer without streaming yields nothing; drain until the server completes.
      }
    },
    resume: async (threadId: string, options: ConnectionOptions & { since?: number }) =>
      stream(
        chat.resume.subscribe,
        { threadId, ...(options.since !== undefined ? { since: options.since } : {}) },
        options,
      ),
    messages: async (threadId: string, options: ConnectionOptions) => {
      const signal = options.abortSignal ? { signal: options.abortSignal } : {};
      if (!chat.held) return (await chat.messages.query({ threadId }, signal)) as UIMessage[];
      const held = await chat.held.query({ threadId }, signal);
      return { messages: held.messages as UIMessage[], version: held.version };
    },
  };
}

function stream(
  subscribe: Subscribe,
  input: unknown,
  options: ConnectionOptions,
): ReadableStream<UIMessageChunk> {
  let subscription: { unsubscribe(): void } | undefined;
  return new ReadableStream<UIMessageChunk>({
    start(controller) {
      let done = false;
      const close = () => {
        if (done) return;
        done = true;
        controller.close();
      };
      subscription = subscribe(input as never, {
        ...(options.abortSignal ? { signal: options.abortSignal } : {}),
        // Tracked chunks arrive as `{ id, data }`; the link resends the id itself when it reconnects.
        onData: (data) => {
          if (!done) controller.enqueue((data as { data: unknown }).data as UIMessageChunk);
        },
        onError: (error) => {
          if (done) return;
          done = true;
          controller.error(error);
        },
        onComplete: close,
        onStopped: close,
      });
    },
    cancel() {
      subscription?.unsubscribe();
    },
  });
}
