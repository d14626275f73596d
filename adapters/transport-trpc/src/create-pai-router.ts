import {
  type ActionResult,
  type Identity,
  type ListResult,
  PaiError,
  type PaiService,
  type SettledRun,
} from "@pai/core";
import {
  applyStoredEvents,
  type ClientActionRow,
  type ClientThreadRow,
  type ClientThreadSnapshot,
  toClientAction,
  toClientEvent,
  toClientFile,
  toClientSnapshot,
  toClientThread,
  toClientView,
} from "@pai/core/protocol";
import {
  type inferProcedureBuilderResolverOptions,
  TRPCError,
  type TRPCProcedureBuilder,
  type TRPCUnsetMarker,
  tracked,
} from "@trpc/server";
import type { z } from "zod";
import { base64ToBytes, bytesToBase64, decodedLength } from "./base64.js";
import { boundedInputError, type MiddlewareResult } from "./bounded-input-error.js";
import { createChatProcedures, type PaiChatStreams } from "./chat-procedures.js";
import type {
  ClientActionResult,
  ClientCreatedThread,
  ClientSendResult,
  ClientViewEvent,
  ClientWatchEvent,
  PaiSettledView,
  PaiSubmitInput,
  PaiThreadView,
} from "./client-shapes.js";
import { toTrpcError } from "./errors.js";
import { createMediaTypeAllowlist } from "./media-type-allowlist.js";
import { createPaiSchemas, DEFAULT_PAI_ROUTER_LIMITS, type PaiRouterLimits } from "./schemas.js";
import { afterStartedWork } from "./started-work.js";

/** A host's base procedure (e.g. `t.procedure` or an authed procedure) without input or output yet. */
export type { PaiChatStreams };

export type PaiBaseProcedure<TContext, TMeta, TContextOverrides, TErrorShape> = TRPCProcedureBuilder<
  TContext,
  TMeta,
  TContextOverrides,
  TRPCUnsetMarker,
  TRPCUnsetMarker,
  TRPCUnsetMarker,
  TRPCUnsetMarker,
  false,
  TErrorShape
>;

/**
 * The request's signal for a call that waits (`waitMs`): a client that goes away ends the wait,
 * and frees the watch slot it holds, instead of leaving it open until `waitMs` passes.
 */
function waitSignal(input: { waitMs?: number } | undefined, signal: AbortSignal | undefined) {
  return input?.waitMs !== undefined && signal ? { signal } : {};
}

/** A waiting call's settled thread as the client view (no scope key, no internal fields). */
function clientSettled<TAgent>(settled: SettledRun | undefined): { settled?: PaiSettledView<TAgent> } {
  if (!settled) return {};
  return { settled: { done: settled.done, view: toClientView(settled.snapshot) as PaiThreadView<TAgent> } };
}

function clientResult<TAgent>({ settled, ...result }: ActionResult): ClientActionResult<TAgent> {
  return { ...result, action: toClientAction(result.action), ...clientSettled<TAgent>(settled) };
}

export type CreatePaiRouterOptions<
  TContext,
  TMeta,
  TContextOverrides,
  TErrorShape,
  TIdentity = Identity,
  TAgent = unknown,
> = {
  /**
   * The procedure every PAI procedure is built on: the host's own `t.procedure` or a procedure
   * with its auth middleware, so the host's context, middleware and transformer apply.
   */
  procedure: PaiBaseProcedure<TContext, TMeta, TContextOverrides, TErrorShape>;
  /**
   * `pai.service`. It is typed by the identity its runtime's `scope` option reads, so `identity`
   * below must return that type: a runtime created without `scope` needs an identity with
   * `scopeKey` (a compile error otherwise; there is no shared default tenant).
   */
  service: PaiService<TIdentity, TAgent>;
  /** Derives the caller's identity from the host's context. Throw (e.g. UNAUTHORIZED) to refuse. */
  identity: (
    ctx: inferProcedureBuilderResolverOptions<
      PaiBaseProcedure<TContext, TMeta, TContextOverrides, TErrorShape>
    >["ctx"],
  ) => NoInfer<TIdentity> | Promise<NoInfer<TIdentity>>;
  /** Input size limits; unset ones use `DEFAULT_PAI_ROUTER_LIMITS` (uploads: `maxUploadBytes`). */
  limits?: Partial<PaiRouterLimits>;
  /** Upload policy of `files.upload`. */
  files?: PaiRouterFilesOptions;
  /**
   * Receives unexpected errors the router meets outside the service (the service reports its
   * own to the runtime's `onRuntimeError`), with the correlation id the client was given.
   */
  onInternalError?: (error: unknown, info: { path: string; correlationId: string }) => void;
  /**
   * The AI SDK chat protocol over tRPC (`chat.send`, `chat.resume`, `chat.messages`), for hosts that
   * expose nothing but tRPC: pass `createChatStreams(pai)` from `@pai/ai-sdk/server`, and use
   * `trpcChatConnection` from `@pai/ai-sdk` on the client. Without it those procedures answer
   * METHOD_NOT_SUPPORTED.
   */
  chat?: PaiChatStreams<NoInfer<TIdentity>>;
};

/** Upload policy of the `files` procedures. */
export type PaiRouterFilesOptions = {
  /**
   * Media types `files.upload` accepts: exact (`"text/csv"`) or per top-level type
   * (`"image/*"`), compared without parameters or case. Others fail with INVALID_INPUT naming
   * the accepted ones. Default: every media type.
   */
  allowedMediaTypes?: readonly string[];
};

/**
 * Builds PAI's procedures on the host's own base procedure and returns them as a router
 * record to mount in the host's router:
 *
 * @example
 * const appRouter = t.router({
 *   ...hostProcedures,
 *   pai: createPaiRouter({ procedure: authedProcedure, service: pai.service, identity: (ctx) => ctx.user }),
 * });
 */
export function createPaiRouter<
  TContext,
  TMeta,
  TContextOverrides,
  TErrorShape,
  TIdentity = Identity,
  TAgent = unknown,
>(options: CreatePaiRouterOptions<TContext, TMeta, TContextOverrides, TErrorShape, TIdentity, TAgent>) {
  const { service } = options;
  // Input errors are summarized before they reach the client: a schema error's default message
  // lists every issue (100,000 unknown keys make a 4 MB answer), so it is cut to a few.
  const procedure = (
    options.procedure as unknown as {
      use(middleware: (opts: { next(): Promise<MiddlewareResult> }) => Promise<MiddlewareResult>): unknown;
    }
  ).use(async ({ next }) => {
    const result = await next();
    if (!result.ok && result.error.code === "BAD_REQUEST") throw boundedInputError(result.error);
    return result;
  }) as typeof options.procedure;
  const limits: PaiRouterLimits = { ...DEFAULT_PAI_ROUTER_LIMITS, ...options.limits };
  const schemas = createPaiSchemas(limits);
  const mediaTypes = createMediaTypeAllowlist(options.files?.allowedMediaTypes);
  type Ctx = Parameters<typeof options.identity>[0];

  const call = async <T>(path: string, ctx: Ctx, run: (identity: TIdentity) => Promise<T>): Promise<T> => {
    try {
      return await run(await options.identity(ctx));
    } catch (error) {
      throw toTrpcError(error, (cause, correlationId) =>
        options.onInternalError?.(cause, { path, correlationId }),
      );
    }
  };

  return {
    chat: createChatProcedures({
      procedure,
      schemas: schemas.chat,
      limits,
      chat: options.chat,
      identity: options.identity,
      ...(options.onInternalError ? { onInternalError: options.onInternalError } : {}),
    }),

    manifest: procedure
      .input(schemas.manifest)
      .query(({ ctx, input }) =>
        call("manifest", ctx, (identity) => service.manifest({ ...input, identity })),
      ),

    threads: {
      create: procedure.input(schemas.threads.create).mutation(({ ctx, input, signal }) =>
        call("threads.create", ctx, async (identity): Promise<ClientCreatedThread<TAgent>> => {
          const created = service.threads.create({ ...input, identity, ...waitSignal(input, signal) });
          // With a first message, the run it started goes first, as after `send`.
          const { settled, ...row } = await (input?.message ? afterStartedWork(created, input) : created);
          return { ...toClientThread(row), ...clientSettled<TAgent>(settled) };
        }),
      ),
      list: procedure.input(schemas.threads.list).query(({ ctx, input }) =>
        call("threads.list", ctx, async (identity): Promise<ListResult<ClientThreadRow>> => {
          const page = await service.threads.list({ ...input, identity });
          return { ...page, items: page.items.map(toClientThread) };
        }),
      ),
      get: procedure.input(schemas.threads.get).query(({ ctx, input }) =>
        call(
          "threads.get",
          ctx,
          async (identity): Promise<PaiThreadView<TAgent>> =>
            // The same object; only its type is narrowed by the agents' contract.
            toClientView(await service.threads.get({ ...input, identity })) as PaiThreadView<TAgent>,
        ),
      ),
      /**
       * The thread's rows without internal fields: what `@pai/client` keeps current with
       * `watch` events. Render from `get` (the projected view) unless you sync yourself.
       */
      snapshot: procedure
        .input(schemas.threads.get)
        .query(({ ctx, input }) =>
          call(
            "threads.snapshot",
            ctx,
            async (identity): Promise<ClientThreadSnapshot> =>
              toClientSnapshot(await service.threads.get({ ...input, identity })),
          ),
        ),
      send: procedure.input(schemas.threads.send).mutation(({ ctx, input, signal }) =>
        call("threads.send", ctx, async (identity): Promise<ClientSendResult<TAgent>> => {
          const { settled, ...sent } = await afterStartedWork(
            service.threads.send({ ...input, identity, ...waitSignal(input, signal) }),
            input,
          );
          return { ...sent, ...clientSettled<TAgent>(settled) };
        }),
      ),
      cancel: procedure
        .input(schemas.threads.cancel)
        .mutation(({ ctx, input }) =>
          call("threads.cancel", ctx, (identity) => service.threads.cancel({ ...input, identity })),
        ),
      /**
       * Committed events (tracked by version, so a reconnect resumes after the last one seen)
       * followed by live events (untracked, never replayed).
       */
      /**
       * The thread as a client renders it, kept current: a `state` item with the whole client
       * view after every committed version (tracked by version, so a reconnect resumes), and
       * live items (text deltas, transient tool data) in between. Each state item carries the
       * whole thread; for long threads sync with `events` and `snapshot` instead.
       */
      watch: procedure.input(schemas.threads.watch).subscription(async function* ({ ctx, input, signal }) {
        const { threadId, lastEventId } = input;
        const resumeAfter = lastEventId != null ? Number(lastEventId) : input.afterVersion;
        const identity = await call("threads.watch", ctx, async (resolved) => resolved);
        try {
          let snapshot = await service.threads.get({ identity, threadId });
          const version = snapshot.thread.version;
          if (resumeAfter === undefined || resumeAfter < version) {
            const first: ClientViewEvent<TAgent> = {
              type: "state",
              version,
              view: toClientView(snapshot) as PaiThreadView<TAgent>,
            };
            yield tracked(String(version), first);
          }
          const events = service.threads.watch({
            identity,
            threadId,
            afterVersion: version,
            ...(signal ? { signal } : {}),
          });
          for await (const event of events) {
            if (event.type === "committed") {
              snapshot = applyStoredEvents(snapshot, event);
              const state: ClientViewEvent<TAgent> = {
                type: "state",
                version: event.version,
                view: toClientView(snapshot) as PaiThreadView<TAgent>,
              };
              yield tracked(String(event.version), state);
            } else {
              yield event as ClientViewEvent<TAgent>;
            }
          }
        } catch (error) {
          if (signal?.aborted) return;
          throw toTrpcError(error, (cause, correlationId) =>
            options.onInternalError?.(cause, { path: "threads.watch", correlationId }),
          );
        }
      }),
      /**
       * The event stream `@pai/client` syncs from: committed events (rows without internal
       * fields), tracked by version so a reconnect resumes after the last one seen, and live
       * events (untracked, never replayed).
       */
      events: procedure.input(schemas.threads.watch).subscription(async function* ({ ctx, input, signal }) {
        const { threadId, lastEventId } = input;
        const afterVersion = lastEventId != null ? Number(lastEventId) : input.afterVersion;
        const identity = await call("threads.events", ctx, async (resolved) => resolved);
        try {
          const events = service.threads.watch({
            identity,
            threadId,
            ...(afterVersion === undefined ? {} : { afterVersion }),
            ...(signal ? { signal } : {}),
          });
          for await (const event of events) {
            if (event.type === "committed") {
              const committed: ClientWatchEvent = { ...event, events: event.events.map(toClientEvent) };
              yield tracked(String(event.version), committed);
            } else {
              yield event as ClientWatchEvent;
            }
          }
        } catch (error) {
          if (signal?.aborted) return;
          throw toTrpcError(error, (cause, correlationId) =>
            options.onInternalError?.(cause, { path: "threads.events", correlationId }),
          );
        }
      }),
    },

    actions: {
      list: procedure.input(schemas.actions.list).query(({ ctx, input }) =>
        call("actions.list", ctx, async (identity): Promise<ListResult<ClientActionRow>> => {
          const page = await service.actions.list({ ...input, identity });
          return { ...page, items: page.items.map(toClientAction) };
        }),
      ),
      submit: procedure
        // Checked by the runtime schema; typed for clients by the agents' actions.
        .input(
          schemas.actions.submit as unknown as z.ZodType<
            z.output<typeof schemas.actions.submit>,
            PaiSubmitInput<TAgent>
          >,
        )
        .mutation(({ ctx, input, signal }) =>
          call("actions.submit", ctx, async (identity) => {
            const { untyped: _untyped, ...answer } = input;
            return clientResult<TAgent>(
              await afterStartedWork(
                service.actions.submit({ ...answer, identity, ...waitSignal(input, signal) }),
                input,
              ),
            );
          }),
        ),
      cancel: procedure
        .input(schemas.actions.cancel)
        .mutation(({ ctx, input, signal }) =>
          call("actions.cancel", ctx, async (identity) =>
            clientResult<TAgent>(
              await afterStartedWork(
                service.actions.cancel({ ...input, identity, ...waitSignal(input, signal) }),
                input,
              ),
            ),
          ),
        ),
      fail: procedure
        .input(schemas.actions.fail)
        .mutation(({ ctx, input, signal }) =>
          call("actions.fail", ctx, async (identity) =>
            clientResult<TAgent>(
              await afterStartedWork(
                service.actions.fail({ ...input, identity, ...waitSignal(input, signal) }),
                input,
              ),
            ),
          ),
        ),
    },

    files: {
      /**
       * Uploads a file sent as base64 in JSON. Larger than `limits.maxUploadBytes` fails with
       * PAYLOAD_TOO_LARGE, a media type outside `files.allowedMediaTypes` with INVALID_INPUT.
       */
      upload: procedure.input(schemas.files.upload).mutation(({ ctx, input }) =>
        call("files.upload", ctx, async (identity) => {
          const size = decodedLength(input.body);
          if (size > limits.maxUploadBytes) {
            throw new PaiError(
              "PAYLOAD_TOO_LARGE",
              `The file "${input.filename}" has ${size} bytes; uploads are limited to ${limits.maxUploadBytes} bytes. Send a smaller file, or raise limits.maxUploadBytes in createPaiRouter (and the host's HTTP body limit).`,
            );
          }
          mediaTypes.check(input.mediaType);
          const body = base64ToBytes(input.body);
          const uploaded = await service.files.upload({
            identity,
            filename: input.filename,
            mediaType: input.mediaType,
            body,
            size: body.byteLength,
            ...(input.threadId === undefined ? {} : { threadId: input.threadId }),
            ...(input.metadata === undefined ? {} : { metadata: input.metadata }),
          });
          return toClientFile(uploaded);
        }),
      ),
      /**
       * File metadata plus either a download URL (when the provider presigns and `inline` is not
       * requested) or the body as base64 (bounded by `limits.maxInlineDownloadBytes`).
       */
      get: procedure.input(schemas.files.get).query(({ ctx, input }) =>
        call("files.get", ctx, async (identity) => {
          const { fileId } = input;
          if (!input.inline && service.files.downloadUrl) {
            const downloadUrl = await service.files.downloadUrl({ identity, fileId });
            if (downloadUrl) {
              const file = await service.files.head({ identity, fileId });
              return { file: toClientFile(file), downloadUrl, body: null };
            }
          }
          const file = await service.files.head({ identity, fileId });
          if (file.size > limits.maxInlineDownloadBytes) {
            throw new TRPCError({
              code: "PAYLOAD_TOO_LARGE",
              message: `File ${fileId} has ${file.size} bytes, more than the inline limit of ${limits.maxInlineDownloadBytes}. Configure a file provider with download URLs or raise limits.maxInlineDownloadBytes.`,
            });
          }
          const stored = await service.files.get({ identity, fileId });
          const body = bytesToBase64(await stored.bytes());
          const { body: _stream, bytes: _bytes, text: _text, ...metadata } = stored;
          return { file: toClientFile(metadata), downloadUrl: null, body };
        }),
      ),
    },
  };
}

/** The router record `createPaiRouter` returns, for typing a host's mount point. */
export type PaiRouterRecord = ReturnType<typeof createPaiRouter>;
