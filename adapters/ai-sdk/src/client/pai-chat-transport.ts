import type { ClientToolSnapshot, JsonValue } from "@pai/core";
import {
  type ChatRequestOptions,
  type ChatTransport,
  parseJsonEventStream,
  type UIMessage,
  type UIMessageChunk,
  uiMessageChunkSchema,
} from "ai";
import type { PaiActionName, PaiActionResume } from "../ui-message.js";
import type { ChatAnswer, ChatRequestBody } from "../wire.js";

/**
 * A `ChatTransport` for the AI SDK's `Chat` / `useChat` that talks to `createPaiChatHandler`. The
 * chat id is the PAI thread id (create the thread first, on your server). A user message starts
 * or continues a run; the SDK's own `addToolOutput` and `addToolApprovalResponse` answer calls that
 * wait on the client; other suspend points are answered with `submit` / `cancel` / `fail`, then
 * `chat.resumeStream()` picks up the run. `resumeStream()` (and so a reload) replays the running
 * run from its start, so a reload or a restarted server loses nothing; a tRPC connection whose
 * link reconnects mid-stream continues after the last chunk it received.
 */
export type PaiChatTransportOptions = {
  /** Frontend-defined client tools sent with every request. */
  clientTools?: ClientToolSnapshot[];
} & (
  | {
      /** URL of `createPaiChatHandler`, e.g. `/api/chat`. */
      api: string;
      headers?: Record<string, string> | Headers | (() => Record<string, string> | Headers);
      credentials?: RequestCredentials;
      fetch?: typeof globalThis.fetch;
    }
  | {
      /** Another way to reach the chat protocol, e.g. `trpcChatConnection(client.pai.chat)`. */
      connection: PaiChatConnection;
    }
);

/** How the transport reaches the server: HTTP (`api`) or tRPC (`trpcChatConnection`). */
export type PaiChatConnection = {
  send(body: ChatRequestBody, options: ConnectionOptions): Promise<ReadableStream<UIMessageChunk>>;
  answer(body: ChatRequestBody, options: ConnectionOptions): Promise<void>;
  resume(
    threadId: string,
    options: ConnectionOptions & { since?: number },
  ): Promise<ReadableStream<UIMessageChunk> | null>;
  /** The thread's messages as a chat holds them; with the thread version they are of, if known. */
  messages(threadId: string, options: ConnectionOptions): Promise<UIMessage[] | HeldMessages>;
};

/** Messages and the thread version they are of: a resume right after the load skips a waiting run. */
export type HeldMessages = { messages: UIMessage[]; version: number };

export type ConnectionOptions = {
  abortSignal?: AbortSignal | undefined;
  headers?: Record<string, string> | Headers;
};

/** Chats whose loaded version the transport remembers; a page holds a few. */
const MAX_HELD = 64;

export class PaiChatError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
    this.name = "PaiChatError";
  }
}

export class PaiChatTransport<UI_MESSAGE extends UIMessage = UIMessage> implements ChatTransport<UI_MESSAGE> {
  /** A reconnect streams the active run from its beginning. */
  readonly resumeStreamIsReplay = true;
  readonly #connection: PaiChatConnection;
  /** Per chat, the thread version of the messages `loadMessages` returned, while the chat still holds them. */
  readonly #held = new Map<string, number>();

  constructor(readonly options: PaiChatTransportOptions) {
    this.#connection = "connection" in options ? options.connection : httpChatConnection(options);
  }

  async sendMessages(
    options: {
      trigger: "submit-message" | "regenerate-message";
      chatId: string;
      messageId: string | undefined;
      messages: UI_MESSAGE[];
      abortSignal: AbortSignal | undefined;
    } & ChatRequestOptions,
  ): Promise<ReadableStream<UIMessageChunk>> {
    if (options.trigger === "regenerate-message") {
      throw new PaiChatError(
        400,
        "UNSUPPORTED",
        "A PAI thread keeps every turn; regenerating a response is not supported. Send a new message instead.",
      );
    }
    this.#held.delete(options.chatId);
    const last = options.messages.at(-1);
    const request =
      last?.role === "user"
        ? { threadId: options.chatId, message: { id: last.id, parts: userParts(last) } }
        : { threadId: options.chatId, answers: last ? answersOf(last) : [] };
    return this.#connection.send({ ...request, ...this.#extras(options.body) } as ChatRequestBody, options);
  }

  /**
   * Replays the thread's active run. Right after `loadMessages`, a run that waits (an approval, a
   * suspend point) is not replayed while the thread is still at the loaded version: the page shows
   * it already, and a replay would rebuild the message under an answer given meanwhile.
   */
  async reconnectToStream(
    options: { chatId: string; abortSignal?: AbortSignal } & ChatRequestOptions,
  ): Promise<ReadableStream<UIMessageChunk> | null> {
    const since = this.#held.get(options.chatId);
    const stream = await this.#connection.resume(
      options.chatId,
      since === undefined ? options : { ...options, since },
    );
    // A replay brings the chat past what was loaded.
    if (stream) this.#held.delete(options.chatId);
    return stream;
  }

  /** The thread's messages as a chat holds them, for `useChat({ messages })` on page load. */
  async loadMessages(chatId: string, options: { abortSignal?: AbortSignal } = {}): Promise<UI_MESSAGE[]> {
    const loaded = await this.#connection.messages(chatId, options);
    this.#held.delete(chatId);
    if (Array.isArray(loaded)) return loaded as UI_MESSAGE[];
    if (this.#held.size >= MAX_HELD) this.#held.delete(this.#held.keys().next().value!);
    this.#held.set(chatId, loaded.version);
    return loaded.messages as UI_MESSAGE[];
  }

  /**
   * Answers a pending action (a suspend point that is not an approval), its payload typed by the
   * action's `name` (from its `data-pai-action` part); then call `chat.resumeStream()`. The server
   * refuses a `name` that is not the action's.
   */
  submit<const N extends PaiActionName<UI_MESSAGE>>(
    chatId: string,
    input: { actionId: string; name: N; payload: PaiActionResume<UI_MESSAGE, N>; idempotencyKey?: string },
  ): Promise<void> {
    return this.#answer(chatId, { type: "action", kind: "submit", ...input, name: input.name as string });
  }

  cancel(
    chatId: string,
    input: { actionId: string; reason?: string; idempotencyKey?: string },
  ): Promise<void> {
    return this.#answer(chatId, { type: "action", kind: "cancel", ...input });
  }

  fail(chatId: string, input: { actionId: string; error: string; idempotencyKey?: string }): Promise<void> {
    return this.#answer(chatId, { type: "action", kind: "fail", ...input });
  }

  #answer(chatId: string, answer: ChatAnswer): Promise<void> {
    this.#held.delete(chatId);
    return this.#connection.answer({ threadId: chatId, answers: [answer], stream: false }, {});
  }

  #extras(body: object | undefined) {
    const extra = (body ?? {}) as { clientData?: JsonValue; clientTools?: ClientToolSnapshot[] };
    const clientTools = extra.clientTools ?? this.options.clientTools;
    return {
      ...(clientTools ? { clientTools } : {}),
      ...(extra.clientData !== undefined ? { clientData: extra.clientData } : {}),
    };
  }
}

/** The chat protocol over HTTP, against `createPaiChatHandler`. */
function httpChatConnection(options: Extract<PaiChatTransportOptions, { api: string }>): PaiChatConnection {
  const request = async (
    method: "GET" | "POST",
    query: string,
    body: object | undefined,
    call: ConnectionOptions,
  ): Promise<Response> => {
    const fetchImpl = options.fetch ?? globalThis.fetch;
    const headers = new Headers(typeof options.headers === "function" ? options.headers() : options.headers);
    for (const [name, value] of new Headers(call.headers)) headers.set(name, value);
    if (body) headers.set("content-type", "application/json");
    const url =
      method === "GET" ? `${options.api}${options.api.includes("?") ? "&" : "?"}${query}` : options.api;
    const response = await fetchImpl(url, {
      method,
      headers,
      ...(body ? { body: JSON.stringify(body) } : {}),
      ...(options.credentials ? { credentials: options.credentials } : {}),
      ...(call.abortSignal ? { signal: call.abortSignal } : {}),
    });
    if (!response.ok) {
      const payload = (await response.json().catch(() => null)) as {
        error?: { code?: string; message?: string };
      } | null;
      throw new PaiChatError(
        response.status,
        payload?.error?.code ?? "HTTP_ERROR",
        payload?.error?.message ?? `The chat request failed with status ${response.status}.`,
      );
    }
    return response;
  };
  const thread = (threadId: string) => `threadId=${encodeURIComponent(threadId)}`;
  return {
    send: async (body, call) => chunks(await request("POST", "", body, call)),
    answer: async (body, call) => {
      const response = await request("POST", "", body, call);
      await response.body?.cancel();
    },
    resume: async (threadId, call) => {
      const since = call.since === undefined ? "" : `&since=${call.since}`;
      const response = await request("GET", `${thread(threadId)}${since}`, undefined, call);
      return response.status === 204 ? null : chunks(response);
    },
    messages: async (threadId, call) => {
      const response = await request("GET", `${thread(threadId)}&messages`, undefined, call);
      const body = (await response.json()) as { messages: UIMessage[]; version?: unknown };
      return typeof body.version === "number"
        ? { messages: body.messages, version: body.version }
        : body.messages;
    },
  };
}

function chunks(response: Response): ReadableStream<UIMessageChunk> {
  if (!response.body) throw new PaiChatError(502, "EMPTY_RESPONSE", "The chat response has no body.");
  return parseJsonEventStream({ stream: response.body, schema: uiMessageChunkSchema }).pipeThrough(
    new TransformStream({
      transform(result, controller) {
        if (!result.success) throw result.error;
        controller.enqueue(result.value as UIMessageChunk);
      },
    }),
  );
}

/** The parts of a user message the service accepts: text and files. */
type OutgoingPart =
  | { type: "text"; text: string }
  | { type: "file"; mediaType: string; url: string; filename?: string };

function userParts(message: UIMessage): OutgoingPart[] {
  return message.parts.flatMap((part): OutgoingPart[] => {
    if (part.type === "text") return [{ type: "text", text: part.text }];
    if (part.type === "file") {
      return [
        {
          type: "file",
          mediaType: part.mediaType,
          url: part.url,
          ...(part.filename ? { filename: part.filename } : {}),
        },
      ];
    }
    return [];
  });
}

/**
 * Answers the last assistant message holds: outputs the client added (`addToolOutput`) and
 * approval responses. The server applies only those whose call still waits.
 */
function answersOf(message: UIMessage): ChatAnswer[] {
  const answers: ChatAnswer[] = [];
  for (const part of message.parts as Array<Record<string, unknown> & { type: string }>) {
    if (part.type !== "dynamic-tool" && !part.type.startsWith("tool-")) continue;
    const toolCallId = part.toolCallId as string;
    if (part.state === "output-available")
      answers.push({ type: "tool-output", toolCallId, output: part.output });
    else if (part.state === "output-error") {
      answers.push({ type: "tool-error", toolCallId, errorText: String(part.errorText ?? "") });
    } else if (part.state === "approval-responded") {
      const approval = part.approval as { id: string; approved: boolean; reason?: string };
      answers.push({
        type: "approval",
        approvalId: approval.id,
        approved: approval.approved,
        ...(approval.reason !== undefined ? { reason: approval.reason } : {}),
      });
    }
  }
  return answers;
}
