import { type inferProcedureBuilderResolverOptions, TRPCError, tracked } from "@trpc/server";
import type { PaiBaseProcedure } from "./create-pai-router.js";
import { toTrpcError } from "./errors.js";
import type { createPaiSchemas } from "./schemas.js";

/**
 * The AI SDK chat protocol as tRPC procedures: `send` and `resume` stream UI message chunks
 * (tracked, so a reconnect of the link is recognized and never sends twice), `messages` reads
 * the thread as a chat holds it. The work is `createChatStreams(pai)` from `@pai/ai-sdk/server`.
 */

/**
 * What `createChatStreams(pai)` of `@pai/ai-sdk/server` returns, described structurally so this
 * package does not depend on it. Chunks are the AI SDK's UI message chunks.
 */
export type PaiChatStreams<TIdentity> = {
  parse(raw: unknown): unknown;
  post(input: {
    identity: TIdentity;
    body: never;
    signal?: AbortSignal;
  }): Promise<{ type: "stream"; stream: AsyncIterable<unknown> } | { type: "answered"; answered: boolean }>;
  resume(input: {
    identity: TIdentity;
    threadId: string;
    signal?: AbortSignal;
  }): Promise<AsyncIterable<unknown> | null>;
  messages(input: { identity: TIdentity; threadId: string }): Promise<unknown[]>;
};

export function createChatProcedures<TContext, TMeta, TContextOverrides, TErrorShape, TIdentity>(options: {
  procedure: PaiBaseProcedure<TContext, TMeta, TContextOverrides, TErrorShape>;
  schemas: ReturnType<typeof createPaiSchemas>["chat"];
  chat: PaiChatStreams<TIdentity> | undefined;
  identity: (
    ctx: inferProcedureBuilderResolverOptions<
      PaiBaseProcedure<TContext, TMeta, TContextOverrides, TErrorShape>
    >["ctx"],
  ) => TIdentity | Promise<TIdentity>;
  onInternalError?: (error: unknown, info: { path: string; correlationId: string }) => void;
}) {
  const { procedure, schemas } = options;
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
  async function* chunks(path: string, source: AsyncIterable<unknown>, signal: AbortSignal | undefined) {
    let seq = 0;
    try {
      for await (const chunk of source) yield tracked(String(++seq), chunk);
    } catch (error) {
      if (signal?.aborted) return;
      throw toTrpcError(error, report(path));
    }
  }

  return {
    /**
     * Sends a message or answers waiting calls (the body `PaiChatTransport` builds) and streams the
     * run. A reconnect of the link (it carries `lastEventId`) ends the stream instead of sending
     * again; `resume` replays the run.
     */
    send: procedure.input(schemas.send).subscription(async function* ({ ctx, input, signal }) {
      const { lastEventId, ...raw } = input as Record<string, unknown>;
      if (lastEventId !== undefined) return;
      const result = await call("chat.send", ctx, (identity) =>
        streams().post({ identity, body: streams().parse(raw) as never, ...(signal ? { signal } : {}) }),
      );
      if (result.type === "answered") return;
      yield* chunks("chat.send", result.stream, signal);
    }),
    /** Replays the thread's active run from its beginning (nothing when the thread is idle). */
    resume: procedure.input(schemas.resume).subscription(async function* ({ ctx, input, signal }) {
      if (input.lastEventId !== undefined) return;
      const stream = await call("chat.resume", ctx, (identity) =>
        streams().resume({ identity, threadId: input.threadId, ...(signal ? { signal } : {}) }),
      );
      if (stream) yield* chunks("chat.resume", stream, signal);
    }),
    /** The thread's messages as a chat holds them. */
    messages: procedure
      .input(schemas.messages)
      .query(({ ctx, input }) =>
        call("chat.messages", ctx, (identity) => streams().messages({ identity, threadId: input.threadId })),
      ),
  };
}
