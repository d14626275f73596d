import type { IncomingMessage, ServerResponse } from "node:http";
import { Readable } from "node:stream";

/**
 * Mounts a fetch-style handler on `node:http` (or Express / Connect, which pass the same
 * objects): the request becomes a `Request`, the `Response` is streamed back, and a client that
 * disconnects aborts the request's signal, which ends the run's stream (never the run).
 */
export function toNodeListener(
  handler: (request: Request) => Promise<Response>,
  options: { origin?: string } = {},
): (req: IncomingMessage, res: ServerResponse) => Promise<void> {
  return async (req, res) => {
    const abort = new AbortController();
    res.on("close", () => abort.abort());
    const origin = options.origin ?? `http://${req.headers.host ?? "localhost"}`;
    const hasBody = req.method !== "GET" && req.method !== "HEAD";
    const headers = new Headers();
    for (const [name, value] of Object.entries(req.headers)) {
      if (Array.isArray(value)) for (const item of value) headers.append(name, item);
      else if (value !== undefined) headers.set(name, value);
    }
    const request = new Request(new URL(req.url ?? "/", origin), {
      method: req.method ?? "GET",
      headers,
      signal: abort.signal,
      ...(hasBody ? { body: Readable.toWeb(req) as ReadableStream<Uint8Array>, duplex: "half" } : {}),
    } as RequestInit);
    const response = await handler(request);
    res.writeHead(response.status, Object.fromEntries(response.headers));
    if (!response.body) {
      res.end();
      return;
    }
    const reader = response.body.getReader();
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        res.write(value);
      }
    } catch {
      // The client went away: its stream ends, the run goes on.
    } finally {
      res.end();
      reader.releaseLock();
    }
  };
}
