import superjson from "superjson";
import type { HostUser } from "./hostile-host.js";

/**
 * Raw HTTP in tRPC v11's wire format with superjson, so a test can send anything (malformed
 * bodies, keys superjson refuses to serialize, wrong content types):
 * - a query is `GET /<path>?input=<urlencoded {"json": input}>`,
 * - a mutation is `POST /<path>` with the body `{"json": input}` (no body when input is undefined),
 * - a subscription is `GET /<path>?input=...` answered as server-sent events: `connected`, then
 *   `data` events (tracked ones with an `id`), `serialized-error` or `return`.
 */

export type RawRequest = {
  method: string;
  /** Procedure path, e.g. `pai.threads.get`. */
  path: string;
  /** Encoded query string without `?`. */
  query?: string;
  headers?: Record<string, string>;
  body?: string;
  /** Read the answer as server-sent events. */
  sse?: boolean;
};

export type Outcome = {
  /**
   * The status the caller gets: the HTTP status, except for an error sent inside a 200 SSE
   * stream, where it is the `httpStatus` of the serialized error shape (tRPC has already sent
   * the headers of a subscription when its procedure fails).
   */
  status: number;
  httpStatus: number;
  transport: "json" | "sse" | "other" | "network-error";
  ok: boolean;
  /** The error message (tRPC shape), the body or status text for non-tRPC answers. */
  message: string;
  /** tRPC code of the error shape, e.g. BAD_REQUEST. */
  code?: string;
  /** PAI code from `data.pai` (the host's error formatter). */
  paiCode?: string;
  issues?: Array<{ message: string; path: Array<string | number> }>;
  /** Everything the server sent (SSE: what was read before the outcome was known). */
  bodyText: string;
  /** The deserialized result (queries, mutations) or first data event (subscriptions). */
  data?: unknown;
  /** The full error shape as sent. */
  shape?: Record<string, any>;
};

export function authHeaders(user: HostUser | null): Record<string, string> {
  return user ? { authorization: `Bearer ${user.userId}:${user.scopeKey}` } : {};
}

const encodeInput = (text: string) => `input=${encodeURIComponent(text)}`;

/** A query with its input serialized by superjson's JSON shape. */
export function queryReq(path: string, input?: unknown): RawRequest {
  return {
    method: "GET",
    path,
    ...(input === undefined ? {} : { query: encodeInput(JSON.stringify({ json: input })) }),
  };
}

/** A query whose `input` parameter is the given text, verbatim. */
export function queryRawReq(path: string, inputText: string): RawRequest {
  return { method: "GET", path, query: encodeInput(inputText) };
}

export function mutationReq(path: string, input?: unknown): RawRequest {
  return {
    method: "POST",
    path,
    headers: { "content-type": "application/json" },
    ...(input === undefined ? {} : { body: JSON.stringify({ json: input }) }),
  };
}

/** A mutation with the given body text, verbatim. */
export function mutationRawReq(path: string, body: string, contentType = "application/json"): RawRequest {
  return { method: "POST", path, headers: contentType ? { "content-type": contentType } : {}, body };
}

export function subscriptionReq(
  path: string,
  input: unknown,
  headers: Record<string, string> = {},
): RawRequest {
  return { ...queryReq(path, input), headers, sse: true };
}

export function subscriptionRawReq(path: string, inputText: string): RawRequest {
  return { ...queryRawReq(path, inputText), sse: true };
}

/**
 * JSON text of `template` with every string `"@@NAME@@"` replaced by the raw text `inserts.NAME`
 * (a deep or wide value, or an object with a `__proto__` own key, written as text).
 */
export function rawJson(template: unknown, inserts: Record<string, string>): string {
  return JSON.stringify(template).replace(/"@@(\w+)@@"/g, (_whole, name: string) => {
    const insert = inserts[name];
    if (insert === undefined) throw new Error(`rawJson: no insert named ${name}`);
    return insert;
  });
}

/** `{"json": <text>}`: a superjson payload without meta. */
export const wrapJson = (text: string) => `{"json":${text}}`;

function describeNetworkError(error: unknown): string {
  const cause = (error as { cause?: { code?: string; message?: string } })?.cause;
  return [String((error as Error)?.message ?? error), cause?.code, cause?.message]
    .filter(Boolean)
    .join(" / ");
}

function fromShape(outcome: Omit<Outcome, "message">, shape: Record<string, any> | undefined): Outcome {
  const data = shape?.data ?? {};
  return {
    ...outcome,
    shape,
    message: typeof shape?.message === "string" ? shape.message : "",
    ...(typeof data.code === "string" ? { code: data.code } : {}),
    ...(typeof data.pai?.code === "string" ? { paiCode: data.pai.code } : {}),
    ...(Array.isArray(data.pai?.issues) ? { issues: data.pai.issues } : {}),
  };
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

function deserialize(value: unknown): unknown {
  try {
    return superjson.deserialize(value as never);
  } catch {
    return value;
  }
}

type SseEvent = { event?: string; id?: string; data: string };

function parseSseBlocks(buffer: string): { events: SseEvent[]; rest: string } {
  const events: SseEvent[] = [];
  const blocks = buffer.split(/\r?\n\r?\n/);
  const rest = blocks.pop() ?? "";
  for (const block of blocks) {
    const event: SseEvent = { data: "" };
    const data: string[] = [];
    for (const line of block.split(/\r?\n/)) {
      if (line.startsWith(":")) continue;
      const colon = line.indexOf(":");
      const field = colon === -1 ? line : line.slice(0, colon);
      const value = colon === -1 ? "" : line.slice(colon + 1).replace(/^ /, "");
      if (field === "event") event.event = value;
      else if (field === "id") event.id = value;
      else if (field === "data") data.push(value);
    }
    event.data = data.join("\n");
    events.push(event);
  }
  return { events, rest };
}

export type SendOptions = {
  /** How long an SSE answer may stay silent before it counts as accepted and waiting. Default 2 s. */
  sseTimeoutMs?: number;
  /** For SSE: keep reading until a data event passes this test (skips others). */
  acceptData?: (value: unknown) => boolean;
};

/** Sends one request and reduces the answer to an `Outcome`; never throws. */
export async function send(
  baseUrl: string,
  user: HostUser | null,
  request: RawRequest,
  options: SendOptions = {},
): Promise<Outcome> {
  const url = `${baseUrl}/${request.path}${request.query ? `?${request.query}` : ""}`;
  const controller = new AbortController();
  const headers: Record<string, string> = {
    ...authHeaders(user),
    ...(request.sse ? { accept: "text/event-stream" } : {}),
    ...request.headers,
  };
  let response: Response;
  try {
    response = await fetch(url, {
      method: request.method,
      headers,
      ...(request.body === undefined ? {} : { body: request.body }),
      signal: controller.signal,
    });
  } catch (error) {
    return {
      status: 0,
      httpStatus: 0,
      transport: "network-error",
      ok: false,
      message: describeNetworkError(error),
      bodyText: "",
    };
  }
  const contentType = response.headers.get("content-type") ?? "";
  if (contentType.startsWith("text/event-stream")) {
    return readSse(response, controller, options);
  }
  const bodyText = await response.text().catch((error: unknown) => `<unreadable body: ${String(error)}>`);
  const parsed = parseJson(bodyText) as { error?: unknown; result?: { data?: unknown } } | undefined;
  const base = { status: response.status, httpStatus: response.status, bodyText };
  if (parsed && typeof parsed === "object" && "error" in parsed) {
    return fromShape({ ...base, transport: "json", ok: false }, deserialize(parsed.error) as never);
  }
  if (parsed && typeof parsed === "object" && "result" in parsed) {
    return {
      ...base,
      transport: "json",
      ok: response.ok,
      message: "",
      data: deserialize(parsed.result?.data),
    };
  }
  return {
    ...base,
    transport: "other",
    ok: response.ok,
    message: bodyText.trim() || response.statusText,
  };
}

async function readSse(
  response: Response,
  controller: AbortController,
  options: SendOptions,
): Promise<Outcome> {
  const reader = response.body!.getReader();
  const decoder = new TextDecoder();
  const base = { httpStatus: response.status, transport: "sse" as const };
  let bodyText = "";
  let buffer = "";
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<"timeout">((resolve) => {
    timer = setTimeout(() => resolve("timeout"), options.sseTimeoutMs ?? 2_000);
  });
  try {
    for (;;) {
      const chunk = await Promise.race([reader.read(), timeout]);
      if (chunk === "timeout") {
        return {
          ...base,
          status: response.status,
          ok: response.ok,
          message: "",
          bodyText,
          data: undefined,
        };
      }
      if (chunk.done) {
        return { ...base, status: response.status, ok: response.ok, message: "stream ended", bodyText };
      }
      const text = decoder.decode(chunk.value, { stream: true });
      bodyText += text;
      buffer += text;
      const { events, rest } = parseSseBlocks(buffer);
      buffer = rest;
      for (const event of events) {
        if (event.event === "connected" || event.event === "ping" || event.event === "restore-id") continue;
        if (event.event === "serialized-error") {
          const shape = deserialize(parseJson(event.data)) as Record<string, any> | undefined;
          const status = typeof shape?.data?.httpStatus === "number" ? shape.data.httpStatus : 500;
          return fromShape({ ...base, status, ok: false, bodyText }, shape);
        }
        if (event.event === "return") {
          return { ...base, status: response.status, ok: response.ok, message: "stream returned", bodyText };
        }
        const value = deserialize(parseJson(event.data));
        if (options.acceptData && !options.acceptData(value)) continue;
        return { ...base, status: response.status, ok: response.ok, message: "", bodyText, data: value };
      }
    }
  } finally {
    clearTimeout(timer);
    controller.abort();
    await reader.cancel().catch(() => undefined);
  }
}
