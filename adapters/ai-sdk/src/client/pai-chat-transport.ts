import type { ClientToolSnapshot, JsonValue } from "@pai/core";
import {
  type ChatRequestOptions,
  type ChatTransport,
  parseJsonEventStream,
  type UIMessage,
  type UIMessageChunk,
  uiMessageChunkSchema,
} from "ai";
import type { ChatAnswer } from "../wire.js";

/**
 * A `ChatTransport` for the AI SDK's `Chat` / `useChat` that talks to `createPaiChatHandler`. The
 * chat id is the PAI thread id (create the thread first, on your server). A user message starts
 * or continues a run; the SDK's own `addToolOutput` and `addToolApprovalResponse` answer calls that
 * wait on the client; other suspend points are answered with `submit` / `cancel` / `fail`, then
 * `chat.resumeStream()` picks up the run. Reconnecting replays the running run from its start, so
 * a reload or a restarted server loses nothing.
 */
export type PaiChatTransportOptions = {
  /** URL of the handler, e.g. `/api/chat`. */
  api: string;
  headers?: Record<string, string> | Headers | (() => Record<string, string> | Headers);
  credentials?: RequestCredentials;
  /** Frontend-defined client tools sent with every request. */
  clientTools?: ClientToolSnapshot[];
  fetch?: typeof globalThis.fetch;
};

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
  /** A reconnect streams the running run from its beginning. */
  readonly resumeStreamIsReplay = true;

  constructor(readonly options: PaiChatTransportOptions) {}

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
    const last = options.messages.at(-1);
    const request =
      last?.role === "user"
        ? { threadId: options.chatId, message: { id: last.id, parts: userParts(last) } }
        : { threadId: options.chatId, answers: last ? answersOf(last) : [] };
    const response = await this.#fetch(
      "POST",
      options.chatId,
      { ...request, ...this.#extras(options.body) },
      options,
    );
    return chunks(response);
  }

  async reconnectToStream(
    options: { chatId: string; abortSignal?: AbortSignal } & ChatRequestOptions,
  ): Promise<ReadableStream<UIMessageChunk> | null> {
    const response = await this.#fetch("GET", options.chatId, undefined, options);
    if (response.status === 204) return null;
    return chunks(response);
  }

  /** The thread's messages as a chat holds them, for `useChat({ messages })` on page load. */
  async loadMessages(chatId: string, options: { abortSignal?: AbortSignal } = {}): Promise<UI_MESSAGE[]> {
    const response = await this.#fetch("GET", chatId, undefined, options, "&messages");
    const body = (await response.json()) as { messages: UI_MESSAGE[] };
    return body.messages;
  }

  /** Answers a pending action (a suspend point that is not an approval); then call `chat.resumeStream()`. */
  submit(
    chatId: string,
    input: { actionId: string; payload: unknown; idempotencyKey?: string },
  ): Promise<void> {
    return this.#answer(chatId, { type: "action", kind: "submit", ...input });
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

  async #answer(chatId: string, answer: ChatAnswer): Promise<void> {
    const response = await this.#fetch(
      "POST",
      chatId,
      { threadId: chatId, answers: [answer], stream: false },
      {},
    );
    await response.body?.cancel();
  }

  #extras(body: object | undefined) {
    const extra = (body ?? {}) as { clientData?: JsonValue; clientTools?: ClientToolSnapshot[] };
    const clientTools = extra.clientTools ?? this.options.clientTools;
    return {
      ...(clientTools ? { clientTools } : {}),
      ...(extra.clientData !== undefined ? { clientData: extra.clientData } : {}),
    };
  }

  async #fetch(
    method: "GET" | "POST",
    chatId: string,
    body: object | undefined,
    options: { abortSignal?: AbortSignal | undefined; headers?: Record<string, string> | Headers },
    query = "",
  ): Promise<Response> {
    const fetchImpl = this.options.fetch ?? globalThis.fetch;
    const headers = new Headers(
      typeof this.options.headers === "function" ? this.options.headers() : this.options.headers,
    );
    for (const [name, value] of new Headers(options.headers)) headers.set(name, value);
    if (body) headers.set("content-type", "application/json");
    const url =
      method === "GET"
        ? `${this.options.api}${this.options.api.includes("?") ? "&" : "?"}threadId=${encodeURIComponent(chatId)}${query}`
        : this.options.api;
    const response = await fetchImpl(url, {
      method,
      headers,
      ...(body ? { body: JSON.stringify(body) } : {}),
      ...(this.options.credentials ? { credentials: this.options.credentials } : {}),
      ...(options.abortSignal ? { signal: options.abortSignal } : {}),
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
  }
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
