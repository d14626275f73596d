import type { UIMessage, UIMessageChunk } from "ai";
import type { ChatRequestBody } from "../wire.js";
import type { ConnectionOptions, PaiChatConnection } from "./pai-chat-transport.js";

/**
 * The chat protocol over tRPC, for hosts that expose nothing else: pass the `chat` procedures of
 * `createPaiRouter({ chat: createChatStreams(pai) })` from your typed client, e.g.
 * `new PaiChatTransport({ connection: trpcChatConnection(client.pai.chat) })`. Subscriptions need
 * tRPC's `httpSubscriptionLink` (SSE). A stream the link has to reconnect ends early instead of
 * sending twice; `resumeStream()` then replays the run.
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
    resume: async (threadId: string, options: ConnectionOptions) =>
      stream(chat.resume.subscribe, { threadId }, options),
    messages: async (threadId: string, options: ConnectionOptions) =>
      (await chat.messages.query(
        { threadId },
        options.abortSignal ? { signal: options.abortSignal } : {},
      )) as UIMessage[],
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
        // Chunks are tracked by the server (`{ id, data }`), so a reconnect is recognized.
        onData: (data) => {
          if (!done) controller.enqueue(((data as { data?: unknown }).data ?? data) as UIMessageChunk);
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
