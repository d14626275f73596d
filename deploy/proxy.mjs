// A tiny round-robin HTTP reverse proxy for the deployment example (no dependencies).
// Every request goes to the next upstream in turn, so consecutive calls of one client land on
// different instances. Responses stream through unbuffered, so tRPC's SSE subscriptions (`watch`)
// work. In production use your load balancer (nginx, Caddy, a cloud LB): PAI needs no sticky sessions.
//
//   UPSTREAMS       comma-separated base URLs, e.g. http://app1:3000,http://app2:3000 (required)
//   PORT, HOST      where to listen (default 8080, 0.0.0.0); PORT=0 picks a free port
//   MAX_BODY_BYTES  largest request body (default 1 MiB, like the app's own limit)

import { createServer, request } from "node:http";

const upstreams = (process.env.UPSTREAMS ?? "")
  .split(",")
  .map((value) => value.trim())
  .filter(Boolean)
  .map((value) => new URL(value));
if (upstreams.length === 0) {
  console.error(JSON.stringify({ msg: "fatal", error: "UPSTREAMS is not set" }));
  process.exit(1);
}
const maxBodyBytes = Number(process.env.MAX_BODY_BYTES ?? 1_048_576);

let next = 0;
const sockets = new Set();

/** Sends one request to the next upstream; a refused connection (instance down) tries the next one. */
function forward(req, res, body, triesLeft) {
  const target = upstreams[next++ % upstreams.length];
  const upstream = request(
    {
      protocol: target.protocol,
      hostname: target.hostname,
      port: target.port,
      method: req.method,
      path: req.url,
      headers: { ...req.headers, "x-forwarded-for": req.socket.remoteAddress ?? "" },
    },
    (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      res.flushHeaders();
      answer.pipe(res);
      // A client that goes away (a closed watch stream) ends the upstream request too.
      res.on("close", () => answer.destroy());
    },
  );
  upstream.on("error", (error) => {
    // Nothing reached a refused upstream, so the request can safely go to another one.
    if (error.code === "ECONNREFUSED" && triesLeft > 1 && !res.headersSent) {
      forward(req, res, body, triesLeft - 1);
      return;
    }
    if (!res.headersSent) res.writeHead(502, { "content-type": "text/plain" });
    res.end();
  });
  upstream.end(body);
}

const server = createServer((req, res) => {
  // Request bodies are small JSON (tRPC calls); holding them lets a refused request be retried.
  const chunks = [];
  let size = 0;
  req.on("data", (chunk) => {
    size += chunk.length;
    if (size > maxBodyBytes) {
      res.writeHead(413, { "content-type": "text/plain", connection: "close" });
      res.end("Request body too large.");
      req.destroy();
      return;
    }
    chunks.push(chunk);
  });
  req.on("end", () => forward(req, res, Buffer.concat(chunks), upstreams.length));
});
server.on("connection", (socket) => {
  sockets.add(socket);
  socket.on("close", () => sockets.delete(socket));
});
server.listen(Number(process.env.PORT ?? 8080), process.env.HOST ?? "0.0.0.0", () => {
  console.log(
    JSON.stringify({
      msg: "listening",
      port: server.address().port,
      upstreams: upstreams.map((url) => url.origin),
    }),
  );
});

const stop = () => {
  server.close(() => process.exit(0));
  for (const socket of sockets) socket.destroy();
};
process.on("SIGTERM", stop);
process.on("SIGINT", stop);
