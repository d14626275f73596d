import {
  type ActionRow,
  PAI_ERROR_HTTP_STATUS,
  PaiError,
  type PaiService,
  type ThreadSnapshot,
} from "@pai/core";
import { MAX_STORED_ID_LENGTH } from "@pai/core/protocol";
import { createUIMessageStreamResponse, type UIMessage, type UIMessageChunk } from "ai";
import {
  type ChatAnswer,
  type ChatRequestBody,
  chatRequestSchema,
  createChatRequestSchema,
  DEFAULT_PAI_CHAT_LIMITS,
  type PaiChatLimits,
} from "../wire.js";
import { chatMessages } from "./chat-messages.js";
import { type ChatChunk, streamRun } from "./stream-run.js";

/**
 * A PAI thread behind the AI SDK's chat protocol, as a fetch-style handler any server can mount
 * (a Next.js route, Hono, `node:http` through a Request adapter). `POST` sends a user message or
 * answers pending calls and streams the run as UI message chunks (SSE); `GET ?threadId=` resumes
 * the thread's running run from its beginning, or answers 204 when nothing is streaming.
 * Every call runs on the host's identity, so scope checks are the service's.
 */

/** What the handler needs of a PAI instance: its service, and its agents to tell approval points apart. */
export type ChatPai<TIdentity> = {
  readonly service: PaiService<TIdentity>;
  readonly agents: Record<string, unknown>;
};

export type PaiChatHandlerOptions<TIdentity> = {
  pai: ChatPai<TIdentity>;
  /** The caller's identity, from the request (cookie, header). Throw to refuse with 401. */
  identity: (request: Request) => TIdentity | Promise<TIdentity>;
  /** Largest accepted request body, in bytes. Default 1 MiB. */
  maxBodyBytes?: number;
  /**
   * Bounds of the request's ids, parts, client tools and JSON values; unset ones use the defaults
   * of `createPaiRouter` (ids: 200 characters but never more than 191, 64 parts, 32 client tools,
   * JSON values of 256 KiB and 64 levels).
   */
  limits?: Partial<PaiChatLimits>;
};

export function createPaiChatHandler<TIdentity>(
  options: PaiChatHandlerOptions<TIdentity>,
): (request: Request) => Promise<Response> {
  const chat = createChatStreams(options.pai);
  const maxBodyBytes = options.maxBodyBytes ?? 1024 * 1024;
  const limits: PaiChatLimits = { ...DEFAULT_PAI_CHAT_LIMITS, ...options.limits };
  return async (request) => {
    let identity: TIdentity;
    try {
      identity = await options.identity(request);
    } catch {
      return errorResponse(401, "UNAUTHORIZED", "The request has no valid identity.");
    }
    try {
      if (request.method === "GET") {
        const params = new URL(request.url).searchParams;
        const threadId = params.get("threadId");
        if (params.has("messages"))
          return Response.json(await chat.heldMessages({ identity, threadId: threadId ?? "" }));
        const since = params.get("since");
        const stream = await chat.resume({
          identity,
          threadId: threadId ?? "",
          ...(since !== null ? { since: versionParam(since) } : {}),
          signal: request.signal,
        });
        return stream ? streamResponse(stream) : new Response(null, { status: 204 });
      }
      if (request.method === "POST") {
        const body = parseChatRequest(await readBody(request, maxBodyBytes), limits);
        const result = await chat.post({ identity, body, signal: request.signal });
        return result.type === "answered"
          ? Response.json({ answered: result.answered })
          : streamResponse(result.stream);
      }
      return errorResponse(405, "METHOD_NOT_ALLOWED", "Use POST to send or answer, GET to resume.");
    } catch (error) {
      if (PaiError.isInstance(error)) {
        return errorResponse(PAI_ERROR_HTTP_STATUS[error.code] ?? 500, error.code, error.message);
      }
      // The service already turns unexpected errors into a redacted INTERNAL PaiError.
      return errorResponse(500, "INTERNAL", "The request failed.");
    }
  };
}

/**
 * The chat protocol without a transport: what the fetch handler and the tRPC procedure both run.
 * `post` sends a message or applies answers and returns the run's chunks (or, for `stream: false`,
 * whether anything was answered); `resume` returns the running run's chunks from its beginning, or
 * null when nothing is running, or with `lastEventId` (a chunk's id) that run's chunks after it.
 */
export function createChatStreams<TIdentity>(pai: ChatPai<TIdentity>) {
  const { service } = pai;

  async function resume(input: {
    identity: TIdentity;
    threadId: string;
    /** The id of the last chunk the client holds: the stream continues that chunk's run after it. */
    lastEventId?: string;
    /**
     * The thread version whose messages the client loaded (`messages`): while the thread is still
     * at it, a waiting run is not replayed, since the client already shows all of it.
     */
    since?: number;
    signal?: AbortSignal;
  }): Promise<AsyncGenerator<ChatChunk> | null> {
    if (input.threadId.length === 0 || input.threadId.length > MAX_STORED_ID_LENGTH) {
      throw new PaiError(
        "INVALID_INPUT",
        `threadId is required (at most ${MAX_STORED_ID_LENGTH} characters).`,
      );
    }
    const base = await service.threads.get({ identity: input.identity, threadId: input.threadId });
    if (input.lastEventId !== undefined) {
      const split = input.lastEventId.lastIndexOf(":");
      const runId = input.lastEventId.slice(0, Math.max(split, 0));
      // The run is looked up in the thread the identity may read, so an id never reaches another thread.
      if (!base.runs.some((run) => run.runId === runId)) {
        throw new PaiError("INVALID_INPUT", "lastEventId names no run of this thread.");
      }
      return chunksOf(
        input.identity,
        base,
        runId,
        { after: input.lastEventId.slice(split + 1) },
        input.signal,
      );
    }
    // A waiting run is replayed too: a client that answered through `submit` and resumes may find
    // the run already parked at its next wait point, and must still see it.
    const run = base.runs.find(
      (candidate) => candidate.status === "running" || candidate.status === "waiting",
    );
    if (!run) return null;
    // A replay rebuilds the chat's message from its start, so an answer the page gave while the
    // replay was on its way (an approval clicked right after a reload) would be overwritten and
    // never sent. A client that holds the waiting run already gets nothing to replay.
    if (run.status === "waiting" && input.since === base.thread.version) return null;
    return chunksOf(input.identity, base, run.runId, {}, input.signal);
  }

  async function post(input: {
    identity: TIdentity;
    body: ChatRequestBody;
    signal?: AbortSignal;
  }): Promise<
    { type: "stream"; stream: AsyncGenerator<ChatChunk> } | { type: "answered"; answered: boolean }
  > {
    const { identity, body } = input;
    const threadId = body.threadId;
    const base = await service.threads.get({ identity, threadId });
    const extras = {
      ...(body.clientTools ? { clientTools: body.clientTools as never } : {}),
      ...(body.clientData !== undefined ? { clientData: body.clientData as never } : {}),
    };
    if (body.message) {
      const sent = await service.threads.send({
        identity,
        threadId,
        message: { ...(body.message.id ? { id: body.message.id } : {}), parts: body.message.parts as never },
        ...extras,
      });
      return {
        type: "stream",
        stream: chunksOf(identity, base, sent.runId, { announce: true }, input.signal),
      };
    }
    let runId: string | undefined;
    for (const answer of body.answers ?? []) {
      const answered = await applyAnswer(identity, base, answer, extras);
      runId ??= answered;
    }
    if (body.stream === false) return { type: "answered", answered: runId !== undefined };
    runId ??= base.runs.find((run) => run.status === "running")?.runId;
    if (!runId) return { type: "stream", stream: (async function* (): AsyncGenerator<ChatChunk> {})() };
    return {
      type: "stream",
      stream: chunksOf(identity, base, runId, { delivered: true, announce: true }, input.signal),
    };
  }

  /**
   * Applies one answer if the call it answers still waits. The SDK resends the whole last assistant
   * message, so outputs of calls the server executed, or answers already given, are skipped.
   */
  async function applyAnswer(
    identity: TIdentity,
    base: ThreadSnapshot,
    answer: ChatAnswer,
    extras: { clientTools?: never; clientData?: never },
  ): Promise<string | undefined> {
    const threadId = base.thread.threadId;
    const pending = (actionId: string) =>
      base.actions.find((action) => action.actionId === actionId && action.state === "pending");
    switch (answer.type) {
      case "tool-output":
      case "tool-error": {
        const action = pending(answer.toolCallId);
        if (action?.kind !== "output") return undefined;
        if (answer.type === "tool-output") {
          await service.actions.submit({
            identity,
            threadId,
            actionId: action.actionId,
            payload: answer.output,
            ...extras,
          });
        } else {
          await service.actions.fail({
            identity,
            threadId,
            actionId: action.actionId,
            error: answer.errorText,
            ...extras,
          });
        }
        return action.runId;
      }
      case "approval": {
        const action = pending(answer.approvalId);
        if (!action || !isApproval(base, action)) return undefined;
        await service.actions.submit({
          identity,
          threadId,
          actionId: action.actionId,
          payload: {
            approved: answer.approved,
            ...(answer.reason !== undefined ? { reason: answer.reason } : {}),
          },
          ...extras,
        });
        return action.runId;
      }
      case "action": {
        const key = answer.idempotencyKey ? { idempotencyKey: answer.idempotencyKey } : {};
        const result =
          answer.kind === "submit"
            ? await service.actions.submit({
                identity,
                threadId,
                actionId: answer.actionId,
                ...(answer.name ? { name: answer.name } : {}),
                payload: answer.payload,
                ...key,
                ...extras,
              })
            : answer.kind === "cancel"
              ? await service.actions.cancel({
                  identity,
                  threadId,
                  actionId: answer.actionId,
                  ...(answer.reason !== undefined ? { reason: answer.reason } : {}),
                  ...key,
                })
              : await service.actions.fail({
                  identity,
                  threadId,
                  actionId: answer.actionId,
                  error: answer.error ?? "",
                  ...key,
                });
        return result.action.runId;
      }
    }
  }

  function isApproval(base: ThreadSnapshot, action: ActionRow): boolean {
    if (action.kind !== "suspend" || !action.suspendName) return false;
    const agent = pai.agents[base.thread.agentId] as
      | {
          tools?: Record<
            string,
            { tool?: { config?: { suspend?: Record<string, { approval?: boolean }> } } }
          >;
        }
      | undefined;
    return agent?.tools?.[action.toolName]?.tool?.config?.suspend?.[action.suspendName]?.approval === true;
  }

  function chunksOf(
    identity: TIdentity,
    base: ThreadSnapshot,
    runId: string,
    from: { delivered?: boolean; after?: string; announce?: boolean },
    signal: AbortSignal | undefined,
  ): AsyncGenerator<ChatChunk> {
    return streamRun({
      service,
      identity,
      base,
      runId,
      delivered: from.delivered ?? false,
      announce: from.announce ?? false,
      ...(from.after !== undefined ? { after: from.after } : {}),
      isApproval: (action) => isApproval(base, action),
      ...(signal ? { signal } : {}),
    });
  }

  /** The thread's messages as the chat holds them (see `chatMessages`). */
  async function messages(input: { identity: TIdentity; threadId: string }): Promise<UIMessage[]> {
    return (await heldMessages(input)).messages;
  }

  /** `messages`, with the thread version they are of (a later `resume({ since })` passes it back). */
  async function heldMessages(input: {
    identity: TIdentity;
    threadId: string;
  }): Promise<{ messages: UIMessage[]; version: number }> {
    if (input.threadId.length === 0 || input.threadId.length > MAX_STORED_ID_LENGTH) {
      throw new PaiError(
        "INVALID_INPUT",
        `threadId is required (at most ${MAX_STORED_ID_LENGTH} characters).`,
      );
    }
    const base = await service.threads.get({ identity: input.identity, threadId: input.threadId });
    return {
      messages: chatMessages(base, (action) => isApproval(base, action)),
      version: base.thread.version,
    };
  }

  return { parse: parseChatRequest, post, resume, messages, heldMessages };
}

function streamResponse(stream: AsyncGenerator<ChatChunk>): Response {
  return createUIMessageStreamResponse({ stream: fromGenerator(stream) });
}

function fromGenerator(chunks: AsyncGenerator<ChatChunk>): ReadableStream<UIMessageChunk> {
  return new ReadableStream<UIMessageChunk>({
    async pull(controller) {
      try {
        const next = await chunks.next();
        if (next.done) controller.close();
        else controller.enqueue(next.value.chunk);
      } catch (error) {
        // The stream has started: the failure reaches the client as the protocol's error chunk.
        controller.enqueue({
          type: "error",
          errorText: PaiError.isInstance(error) ? error.message : "The stream failed.",
        });
        controller.close();
      }
    },
    async cancel() {
      await chunks.return(undefined);
    },
  });
}

/** A thread version from the query string: digits only, within what a version can be. */
function versionParam(text: string): number {
  if (!/^\d{1,10}$/.test(text) || Number(text) > 2 ** 31 - 1) {
    throw new PaiError("INVALID_INPUT", "since must be a thread version (a whole number).");
  }
  return Number(text);
}

/** Reads at most `maxBytes` of the body (a missing or lying content-length cannot make it read more). */
async function readBody(request: Request, maxBytes: number): Promise<unknown> {
  const tooLarge = () => new PaiError("INVALID_INPUT", `The request body exceeds ${maxBytes} bytes.`);
  if (Number(request.headers.get("content-length") ?? "0") > maxBytes) throw tooLarge();
  const reader = request.body?.getReader();
  const parts: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const next = reader ? await reader.read() : { done: true as const, value: undefined };
    if (next.done) break;
    size += next.value.byteLength;
    if (size > maxBytes) {
      await reader?.cancel();
      throw tooLarge();
    }
    parts.push(next.value);
  }
  try {
    const bytes = new Uint8Array(size);
    let offset = 0;
    for (const part of parts) {
      bytes.set(part, offset);
      offset += part.byteLength;
    }
    // TextDecoder, not Buffer: the handler also runs on edge runtimes.
    return JSON.parse(new TextDecoder().decode(bytes));
  } catch {
    throw new PaiError("INVALID_INPUT", "The request body is not JSON.");
  }
}

const schemas = new WeakMap<object, typeof chatRequestSchema>();

/**
 * Validates a chat request within `limits` (unset ones: `createPaiRouter`'s defaults), bounding
 * every JSON value in it before anything else walks it. Messages name at most five problems, never
 * echoing the input; the error's `issues` carry their paths.
 */
export function parseChatRequest(raw: unknown, limits?: Partial<PaiChatLimits>): ChatRequestBody {
  let schema = chatRequestSchema;
  if (limits) {
    schema = schemas.get(limits) ?? createChatRequestSchema({ ...DEFAULT_PAI_CHAT_LIMITS, ...limits });
    schemas.set(limits, schema);
  }
  const parsed = schema.safeParse(raw);
  if (!parsed.success) {
    const issues = parsed.error.issues.slice(0, 5).map((issue) => ({
      message: issue.message,
      path: issue.path.map((segment) => (typeof segment === "number" ? segment : String(segment))),
    }));
    const summary = issues.map((issue) => `${issue.path.join(".") || "body"}: ${issue.message}`);
    throw new PaiError("INVALID_INPUT", `Invalid chat request: ${summary.join("; ")}`, { issues });
  }
  return parsed.data;
}

function errorResponse(status: number, code: string, message: string): Response {
  return Response.json({ error: { code, message } }, { status });
}
