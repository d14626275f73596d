import { type inferProcedureBuilderResolverOptions, TRPCError, tracked } from "@trpc/server";
import { z } from "zod";
import { boundedInputError } from "./bounded-input-error.js";
import type { PaiBaseProcedure } from "./create-pai-router.js";
import { toTrpcError } from "./errors.js";
import {
  type createPaiSchemas,
  DEFAULT_PAI_ROUTER_LIMITS,
  idSchemas,
  type PaiRouterLimits,
} from "./schemas.js";

/**
 * The AI SDK chat protocol as tRPC procedures: `send` and `resume` stream UI message chunks,
 * each `tracked` with its position in the run, so when the link reconnects (its EventSource sends
 * the last id as `lastEventId`) the stream continues after that chunk, on whichever instance
 * answers, and never sends twice; `messages` reads the thread as a chat holds it. The work is
 * `createChatStreams(pai)` from `@pai/ai-sdk/server`.
 */

/**
 * What `createChatStreams(pai)` of `@pai/ai-sdk/server` returns, described structurally so this
 * package does not depend on it. Chunks are the AI SDK's UI message chunks, each with the id a
 * stream resumes after (`resume({ lastEventId })`).
 */
export type PaiChatStreams<TIdentity> = {
  /**
   * Validates a chat body within the router's limits (a version that takes no limits applies its
   * own; the router checks its limits on the parsed body either way).
   */
  parse(raw: unknown, limits?: PaiChatParseLimits): unknown;
  post(input: {
    identity: TIdentity;
    body: never;
    signal?: AbortSignal;
  }): Promise<
    | { type: "stream"; stream: AsyncIterable<{ id: string; chunk: unknown }> }
    | { type: "answered"; answered: boolean }
  >;
  resume(input: {
    identity: TIdentity;
    threadId: string;
    lastEventId?: string;
    /** The thread version whose messages the client loaded (`held`): a waiting run is not replayed. */
    since?: number;
    signal?: AbortSignal;
  }): Promise<AsyncIterable<{ id: string; chunk: unknown }> | null>;
  messages(input: { identity: TIdentity; threadId: string }): Promise<unknown[]>;
  heldMessages(input: {
    identity: TIdentity;
    threadId: string;
  }): Promise<{ messages: unknown[]; version: number }>;
};

/** The router limits a chat body is held to. */
export type PaiChatParseLimits = Pick<
  PaiRouterLimits,
  "maxIdLength" | "maxMessageParts" | "maxClientTools" | "maxJsonSize" | "maxJsonDepth"
>;

/**
 * The router's limits on a parsed chat body, as `threads.send` and `actions.*` check them: ids,
 * parts and client tools. (Its JSON values are bounded by the `chat.send` input schema.)
 */
function parsedBodySchema(limits: PaiRouterLimits) {
  const { id, messageId } = idSchemas(limits);
  return z.object({
    threadId: id,
    message: z
      .object({ id: messageId.optional(), parts: z.array(z.unknown()).max(limits.maxMessageParts) })
      .optional(),
    answers: z
      .array(
        z.object({
          toolCallId: id.optional(),
          approvalId: id.optional(),
          actionId: id.optional(),
          name: z.string().min(1).max(limits.maxIdLength).optional(),
          idempotencyKey: id.optional(),
        }),
      )
      .optional(),
    clientTools: z.array(z.unknown()).max(limits.maxClientTools).optional(),
  });
}

/**
 * A chunk id names the run and what the client holds of its message (live text blocks included),
 * so it outgrows the 32 characters the version ids of other subscriptions get.
 */
const lastEventId = z.string().min(1).max(4096);

export function createChatProcedures<TContext, TMeta, TContextOverrides, TErrorShape, TIdentity>(options: {
  procedure: PaiBaseProcedure<TContext, TMeta, TContextOverrides, TErrorShape>;
  schemas: ReturnType<typeof createPaiSchemas>["chat"];
  /** The router's limits; the chat body is held to them as `threads.send` is. Default `DEFAULT_PAI_ROUTER_LIMITS`. */
  limits?: PaiRouterLimits;
  chat: PaiChatStreams<TIdentity> | undefined;
  identity: (
    ctx: inferProcedureBuilderResolverOptions<
      PaiBaseProcedure<TContext, TMeta, TContextOverrides, TErrorShape>
    >["ctx"],
  ) => TIdentity | Promise<TIdentity>;
  onInternalError?: (error: unknown, info: { path: string; correlationId: string }) => void;
}) {
  const { procedure, schemas } = options;
  const limits = options.limits ?? DEFAULT_PAI_ROUTER_LIMITS;
  const parseLimits: PaiChatParseLimits = {
    maxIdLength: limits.maxIdLength,
    maxMessageParts: limits.maxMessageParts,
    maxClientTools: limits.maxClientTools,
    maxJsonSize: limits.maxJsonSize,
    maxJsonDepth: limits.maxJsonDepth,
  };
  const bodyLimits = parsedBodySchema(limits);
  /** The chat body, validated by the streams and then held to the router's limits. */
  const parse = <T>(raw: unknown): T => {
    const body = streams().parse(raw, parseLimits);
    const checked = bodyLimits.safeParse(body);
    if (!checked.success) {
      throw boundedInputError(new TRPCError({ code: "BAD_REQUEST", cause: checked.error }));
    }
    return body as T;
  };
  const resumeInput = schemas.resume.extend({ lastEventId: lastEventId.optional() });
  const report = (path: string) => (cause: unknown, correlationId: string) =>
    options.onInternalError?.(cause, { path, correlationId });
  const streams = (): PaiChatStreams<TIdentity> => {
    if (!options.chat) {
      throw new TRPCError({
        code: "METHOD_NOT_SUPPORTED",
        message: "This server does not serve the AI SDK chat protocol: pass createPaiRouter({ chat }).",
      });
    }
    return options.chat;
  };
  const call = async <T>(
    path: string,
    ctx: Parameters<typeof options.identity>[0],
    run: (identity: TIdentity) => Promise<T>,
  ): Promise<T> => {
    try {
      return await run(await options.identity(ctx));
    } catch (error) {
      throw toTrpcError(error, report(path));
    }
  };
  async function* chunks(
    path: string,
    source: AsyncIterable<{ id: string; chunk: unknown }>,
    signal: AbortSignal | undefined,
  ) {
    try {
      for await (const { id, chunk } of source) yield tracked(id, chunk);
    } catch (error) {
      if (signal?.aborted) return;
      throw toTrpcError(error, report(path));
    }
  }
  async function* resumed(
    path: string,
    ctx: Parameters<typeof options.identity>[0],
    input: { threadId: string; lastEventId?: string },
    signal: AbortSignal | undefined,
  ) {
    const stream = await call(path, ctx, (identity) =>
      streams().resume({ identity, ...input, ...(signal ? { signal } : {}) }),
    );
    if (stream) yield* chunks(path, stream, signal);
  }

  return {
    /**
     * Sends a message or answers waiting calls (the body `PaiChatTransport` builds) and streams the
     * run. A reconnect of the link (it carries `lastEventId`) continues the run after that chunk
     * instead of sending again.
     */
    send: procedure.input(schemas.send).subscription(async function* ({ ctx, input, signal }) {
      const { lastEventId: last, ...raw } = input as Record<string, unknown>;
      if (last !== undefined) {
        const parsed = lastEventId.safeParse(last);
        if (!parsed.success) throw new TRPCError({ code: "BAD_REQUEST", message: "Invalid lastEventId." });
        const body = await call("chat.send", ctx, async () => parse<{ threadId: string }>(raw));
        yield* resumed("chat.send", ctx, { threadId: body.threadId, lastEventId: parsed.data }, signal);
        return;
      }
      const result = await call("chat.send", ctx, (identity) =>
        streams().post({ identity, body: parse<never>(raw), ...(signal ? { signal } : {}) }),
      );
      if (result.type === "answered") return;
      yield* chunks("chat.send", result.stream, signal);
    }),
    /**
     * Replays the thread's active run from its beginning (nothing when the thread is idle); after a
     * reconnect, continues the run after `lastEventId`.
     */
    resume: procedure.input(resumeInput).subscription(({ ctx, input, signal }) =>
      resumed(
        "chat.resume",
        ctx,
        {
          threadId: input.threadId,
          ...(input.lastEventId !== undefined ? { lastEventId: input.lastEventId } : {}),
          ...(input.since !== undefined ? { since: input.since } : {}),
        },
        signal,
      ),
    ),
    /** The thread's messages as a chat holds them. */
    messages: procedure
      .input(schemas.messages)
      .query(({ ctx, input }) =>
        call("chat.messages", ctx, (identity) => streams().messages({ identity, threadId: input.threadId })),
      ),
    /**
     * `messages` with the thread version they are of; a `resume` that passes it back as `since`
     * skips a run that waits while the thread is still at that version.
     */
    held: procedure
      .input(schemas.messages)
      .query(({ ctx, input }) =>
        call("chat.held", ctx, (identity) => streams().heldMessages({ identity, threadId: input.threadId })),
      ),
  };
}
