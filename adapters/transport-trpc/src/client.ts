import type { FileDownload, PaiTransport } from "@pai/client";
import { getErrorMessage, PaiError, type PaiErrorCode, type PaiIssue, type WatchEvent } from "@pai/core";
import {
  getUntypedClient,
  type HTTPHeaders,
  httpBatchLink,
  httpLink,
  httpSubscriptionLink,
  isTRPCClientError,
  splitLink,
  TRPCUntypedClient,
} from "@trpc/client";
import type { AnyTRPCRouter } from "@trpc/server";
import { base64ToBytes, bytesToBase64 } from "./base64.js";

// Browser-safe: this entry imports no server code (only `@trpc/client` and type-only `@trpc/server`).

/** The tRPC data transformer the host's server uses (e.g. `superjson`). */
export type TrpcTransformer = { serialize(value: unknown): unknown; deserialize(value: unknown): unknown };

type EventSourceClass = new (url: string, init?: never) => EventSource;

export type CreateTrpcTransportOptions = {
  /** The tRPC endpoint, e.g. `/api/trpc` or `http://127.0.0.1:3000`. */
  url: string;
  /** Where the host mounted `createPaiRouter(...)` in its router. Default `"pai"`. */
  path?: string;
  /** Headers for queries and mutations (e.g. authorization). */
  headers?: HTTPHeaders | (() => HTTPHeaders | Promise<HTTPHeaders>);
  /** The host server's transformer; required when the server uses one (e.g. `superjson`). */
  transformer?: TrpcTransformer;
  /**
   * Send queries and mutations through `httpBatchLink`. Default `false` (`httpLink`, one
   * request per call): PAI's client sends one command at a time, so batches hold one call,
   * and the batch link holds every request for a timer tick first (at least 1 ms on Node).
   * Turn it on when the app fires many PAI queries at once (e.g. many threads on one page).
   */
  batch?: boolean;
  /** An `EventSource` class for runtimes without one (Node: the `eventsource` package). */
  EventSource?: EventSourceClass;
  /**
   * Options for the `EventSource`. Default: when `headers` and `EventSource` are both given,
   * a `fetch` that adds the headers (supported by the `eventsource` package), since native
   * browser EventSource cannot send headers (use cookies or `connectionParams` there).
   */
  eventSourceOptions?:
    | Record<string, unknown>
    | (() => Record<string, unknown> | Promise<Record<string, unknown>>);
  /** Sent with subscriptions as `connectionParams` (readable in the host's `createContext`). */
  connectionParams?:
    | Record<string, string>
    | (() => Record<string, string> | Promise<Record<string, string>>);
};

const TRPC_TO_PAI_CODE: Record<string, PaiErrorCode> = {
  BAD_REQUEST: "INVALID_INPUT",
  PARSE_ERROR: "INVALID_INPUT",
  UNPROCESSABLE_CONTENT: "INVALID_INPUT",
  NOT_FOUND: "NOT_FOUND",
  CONFLICT: "CONFLICT",
  FORBIDDEN: "FORBIDDEN",
  UNAUTHORIZED: "FORBIDDEN",
  PRECONDITION_FAILED: "TOOL_DISABLED",
  PAYLOAD_TOO_LARGE: "PAYLOAD_TOO_LARGE",
  TOO_MANY_REQUESTS: "TOO_MANY_REQUESTS",
};

/**
 * Turns a tRPC client error back into a `PaiError`: the PAI code and issues come from
 * `data.pai` when the host's error formatter adds `paiErrorData`, else from the tRPC code.
 */
export function fromTrpcClientError(error: unknown): PaiError {
  if (PaiError.isInstance(error)) return error;
  if (isTRPCClientError(error)) {
    const data = (error.data ?? null) as {
      code?: string;
      pai?: { code: PaiErrorCode; issues?: PaiIssue[] };
    } | null;
    if (data?.pai) {
      return new PaiError(data.pai.code, error.message, {
        cause: error,
        ...(data.pai.issues ? { issues: data.pai.issues } : {}),
      });
    }
    const code = data?.code ? TRPC_TO_PAI_CODE[data.code] : undefined;
    if (code) return new PaiError(code, error.message, { cause: error });
    if (data?.code) return new PaiError("INTERNAL", error.message, { cause: error });
  }
  return new PaiError("INTERNAL", `The PAI request failed: ${getErrorMessage(error)}`, { cause: error });
}

/** tRPC's envelope for a tracked event: `{ id, data }`; live events arrive bare. */
function toWatchEvent(value: unknown): WatchEvent {
  const tracked = value as { id?: unknown; data?: unknown; type?: unknown };
  if (tracked && tracked.type === undefined && typeof tracked.id === "string" && tracked.data) {
    return tracked.data as WatchEvent;
  }
  return value as WatchEvent;
}

type FilesGetOutput = {
  file: Extract<FileDownload, { body: Uint8Array }>["file"];
  downloadUrl: string | null;
  body: string | null;
};

function mergeHeaders(base: HeadersInit | undefined, extra: HTTPHeaders): Headers {
  const headers = new Headers(base);
  const entries: Iterable<[string, string | string[] | undefined]> =
    Symbol.iterator in extra ? (extra as Iterable<[string, string]>) : Object.entries(extra);
  for (const [name, value] of entries) {
    if (value === undefined) continue;
    headers.delete(name);
    for (const item of Array.isArray(value) ? value : [value]) headers.append(name, item);
  }
  return headers;
}

/**
 * A `PaiTransport` over an existing tRPC client: a `TRPCUntypedClient`, or the typed client
 * from `createTRPCClient` (its untyped core is used). `path` is where PAI is mounted.
 */
export function trpcTransport(client: object, options: { path?: string } = {}): PaiTransport {
  const untyped = (client instanceof TRPCUntypedClient ? client : getUntypedClient(client as never)) as
    | TRPCUntypedClient<AnyTRPCRouter>
    | undefined;
  if (!untyped) {
    throw new PaiError(
      "INVALID_INPUT",
      "trpcTransport needs the root client from createTRPCClient(...) or a TRPCUntypedClient, not a nested router proxy.",
    );
  }
  const prefix = options.path ?? "pai";
  const at = (name: string) => (prefix ? `${prefix}.${name}` : name);
  const query = async <T>(name: string, input?: unknown): Promise<T> => {
    try {
      return (await untyped.query(at(name), input)) as T;
    } catch (error) {
      throw fromTrpcClientError(error);
    }
  };
  const mutation = async <T>(name: string, input?: unknown): Promise<T> => {
    try {
      return (await untyped.mutation(at(name), input)) as T;
    } catch (error) {
      throw fromTrpcClientError(error);
    }
  };
  return {
    manifest: (input) => query("manifest", input),
    threads: {
      create: (input) => mutation("threads.create", input),
      list: (input) => query("threads.list", input),
      // The rows without internal fields, which the client keeps current from watch events.
      get: (input) => query("threads.snapshot", input),
      send: (input) => mutation("threads.send", input),
      cancel: (input) => mutation("threads.cancel", input),
      watch: ({ threadId, afterVersion, signal, onOpen }) => ({
        async *[Symbol.asyncIterator]() {
          const input = afterVersion === undefined ? { threadId } : { threadId, afterVersion };
          // Callbacks (not the iterator form) so the start of the stream is observable.
          const queue: WatchEvent[] = [];
          let ended = false;
          let failure: unknown = null;
          let wake: (() => void) | null = null;
          const notify = () => {
            wake?.();
            wake = null;
          };
          const subscription = untyped.subscription(at("threads.events"), input, {
            onStarted: () => onOpen?.(),
            onData: (value: unknown) => {
              queue.push(toWatchEvent(value));
              notify();
            },
            onError: (error: unknown) => {
              failure = error ?? new Error("subscription failed");
              notify();
            },
            onComplete: () => {
              ended = true;
              notify();
            },
          });
          const abort = () => {
            ended = true;
            notify();
          };
          signal?.addEventListener("abort", abort, { once: true });
          try {
            while (true) {
              if (queue.length > 0) {
                yield queue.shift() as WatchEvent;
                continue;
              }
              if (failure) throw fromTrpcClientError(failure);
              if (ended || signal?.aborted) return;
              await new Promise<void>((resolve) => {
                wake = resolve;
              });
            }
          } finally {
            signal?.removeEventListener("abort", abort);
            subscription.unsubscribe();
          }
        },
      }),
    },
    actions: {
      list: (input) => query("actions.list", input),
      submit: (input) => mutation("actions.submit", input),
      cancel: (input) => mutation("actions.cancel", input),
      fail: (input) => mutation("actions.fail", input),
    },
    files: {
      upload: ({ body, ...rest }) => mutation("files.upload", { ...rest, body: bytesToBase64(body) }),
      get: async (input) => {
        const result = await query<FilesGetOutput>("files.get", input);
        if (result.downloadUrl) return { file: result.file, downloadUrl: result.downloadUrl };
        return { file: result.file, body: base64ToBytes(result.body ?? "") };
      },
    },
  };
}

/**
 * Creates a tRPC client for PAI (`splitLink`: subscriptions over SSE with
 * `httpSubscriptionLink`, everything else with `httpLink`, or `httpBatchLink` when `batch`)
 * and wraps it as a `PaiTransport`.
 *
 * @example
 * const client = createPaiClient({ transport: createTrpcTransport({ url: "/api/trpc", transformer: superjson }) });
 */
export function createTrpcTransport(options: CreateTrpcTransportOptions): PaiTransport {
  const { url, headers, transformer, EventSource, connectionParams, batch = false } = options;
  const resolveHeaders = async (): Promise<HTTPHeaders> =>
    typeof headers === "function" ? await headers() : (headers ?? {});
  const eventSourceOptions =
    options.eventSourceOptions ??
    (headers && EventSource
      ? async () => {
          const extra = await resolveHeaders();
          return {
            fetch: (input: string | URL | Request, init?: RequestInit) =>
              fetch(input, { ...init, headers: mergeHeaders(init?.headers, extra) }),
          };
        }
      : undefined);
  // The link option types depend on the router's transformer flag; this client is router-agnostic.
  const subscriptionOptions = {
    url,
    ...(transformer ? { transformer } : {}),
    ...(EventSource ? { EventSource } : {}),
    ...(eventSourceOptions ? { eventSourceOptions } : {}),
    ...(connectionParams ? { connectionParams } : {}),
  } as Parameters<typeof httpSubscriptionLink>[0];
  const requestOptions = {
    url,
    headers: resolveHeaders,
    ...(transformer ? { transformer } : {}),
  };
  const client = new TRPCUntypedClient<AnyTRPCRouter>({
    links: [
      splitLink({
        condition: (op) => op.type === "subscription",
        true: httpSubscriptionLink(subscriptionOptions),
        false: batch
          ? httpBatchLink(requestOptions as Parameters<typeof httpBatchLink>[0])
          : httpLink(requestOptions as Parameters<typeof httpLink>[0]),
      }),
    ],
  });
  return trpcTransport(client, { path: options.path ?? "pai" });
}
