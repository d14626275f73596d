import { lookup } from "node:dns/promises";
import { createServer, type IncomingMessage } from "node:http";
import type { AddressInfo } from "node:net";
import { hostname } from "node:os";
import { createPai, defineAgent, PaiError, type RuntimeErrorReport } from "@pai/core";
import { type ScriptedModel, scriptedModel } from "@pai/core/testing";
import { memoryFiles, memoryStorage } from "@pai/storage-memory";
import type { Experimental_DownloadFunction } from "ai";
import { afterEach, describe, expect, it } from "vitest";
import { createTestRuntime } from "../support/test-runtime.js";

// A file part's URL is the user's: by default the server never fetches it (no SSRF, no
// unbounded downloads) and only https:, http: and data: URLs are accepted at all.

type Listener = { origin: string; requests: string[]; close(): Promise<void> };

const listeners: Listener[] = [];
afterEach(async () => {
  await Promise.all(listeners.splice(0).map((listener) => listener.close()));
});

/**
 * An HTTP listener on 127.0.0.1 standing in for an internal service (a cloud metadata
 * endpoint), recording every request it gets. Its origin uses this machine's host name when
 * that resolves to 127.0.0.1 (as `vm` did in the audit): the AI SDK refuses literal loopback
 * addresses but not names, so that is the URL its default downloader fetched.
 */
async function startListener(): Promise<Listener> {
  const requests: string[] = [];
  const server = createServer((request: IncomingMessage, response) => {
    requests.push(request.url ?? "");
    response.writeHead(200, { "content-type": "text/plain" });
    response.end("secret-instance-credentials");
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  const name = hostname();
  const resolvesLocally = await lookup(name, { family: 4 }).then(
    (found) => found.address === "127.0.0.1",
    () => false,
  );
  const listener = {
    origin: `http://${resolvesLocally ? name : "127.0.0.1"}:${port}`,
    requests,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
  listeners.push(listener);
  return listener;
}

type PromptFilePart = { type: "file"; mediaType: string; data: { type: string; url?: URL; data?: unknown } };

/** The file parts of the user messages in the model's `callIndex`-th call. */
function filePartsInCall(model: ScriptedModel, callIndex: number): PromptFilePart[] {
  const call = model.calls[callIndex];
  if (!call) throw new Error(`The model was called ${model.calls.length} times, not ${callIndex + 1}.`);
  return call.prompt.flatMap((message) =>
    message.role === "user"
      ? (message.content.filter((part) => part.type === "file") as unknown as PromptFilePart[])
      : [],
  );
}

async function rejection(promise: Promise<unknown>): Promise<PaiError> {
  const error = await promise.then(
    () => {
      throw new Error("Expected the call to be rejected.");
    },
    (caught: unknown) => caught,
  );
  if (!PaiError.isInstance(error)) throw error;
  return error;
}

const agent = defineAgent({ name: "main" });

describe("file part URLs are never fetched by default", () => {
  it("passes a user's URL to the provider as it is: the listener gets no request and later turns still work", async () => {
    const listener = await startListener();
    const errors: RuntimeErrorReport[] = [];
    const runtime = await createTestRuntime({
      agent,
      model: [{ text: "seen" }, { text: "again" }],
      onRuntimeError: (report) => errors.push(report),
    });
    try {
      const threadId = await runtime.createThread();
      const url = `${listener.origin}/latest/meta-data/iam/security-credentials/`;
      const snapshot = await runtime.send(threadId, {
        parts: [
          { type: "text", text: "what is in this file?" },
          { type: "file", mediaType: "text/plain", url },
        ],
      });
      expect(snapshot.runs.at(-1)?.status).toBe("completed");
      const model = runtime.model as ScriptedModel;
      const [file] = filePartsInCall(model, 0);
      expect(file?.mediaType).toBe("text/plain");
      expect(file?.data.type).toBe("url");
      expect(String(file?.data.url)).toBe(url);

      // The part stays in the history; the next turn converts it again, still without fetching.
      const next = await runtime.send(threadId, "and now?");
      expect(next.runs.at(-1)?.status).toBe("completed");
      expect(String(filePartsInCall(model, 1)[0]?.data.url)).toBe(url);
      expect(listener.requests).toEqual([]);
      expect(errors).toEqual([]);
    } finally {
      await runtime.close();
    }
  });

  it("fetches through the host's `download` function when it opts in", async () => {
    const listener = await startListener();
    const asked: Array<{ url: string; isUrlSupportedByModel: boolean }> = [];
    // A host's allow-list: only its own file server is fetched, bounded; anything else passes through.
    const download: Experimental_DownloadFunction = (requests) =>
      Promise.all(
        requests.map(async ({ url, isUrlSupportedByModel, abortSignal }) => {
          asked.push({ url: url.href, isUrlSupportedByModel });
          if (url.origin !== new URL(listener.origin).origin) return null;
          const response = await fetch(url, abortSignal ? { signal: abortSignal } : {});
          const data = new Uint8Array(await response.arrayBuffer());
          if (data.byteLength > 1024) throw new Error("too large");
          return { data, mediaType: response.headers.get("content-type") ?? undefined };
        }),
      );
    const runtime = await createTestRuntime({ agent, model: [{ text: "read it" }], download });
    try {
      const threadId = await runtime.createThread();
      const allowed = `${listener.origin}/files/report.txt`;
      const elsewhere = "https://files.example.com/other.pdf";
      const snapshot = await runtime.send(threadId, {
        parts: [
          { type: "text", text: "summarize" },
          { type: "file", mediaType: "text/plain", url: allowed },
          { type: "file", mediaType: "application/pdf", url: elsewhere },
        ],
      });
      expect(snapshot.runs.at(-1)?.status).toBe("completed");
      expect(listener.requests).toEqual(["/files/report.txt"]);
      expect(asked).toEqual([
        { url: allowed, isUrlSupportedByModel: false },
        { url: elsewhere, isUrlSupportedByModel: false },
      ]);
      const [fetched, passed] = filePartsInCall(runtime.model as ScriptedModel, 0);
      expect(fetched?.data.type).toBe("data");
      expect(new TextDecoder().decode(fetched?.data.data as Uint8Array)).toBe("secret-instance-credentials");
      expect(passed?.data.type).toBe("url");
      expect(String(passed?.data.url)).toBe(elsewhere);
    } finally {
      await runtime.close();
    }
  });

  it("refuses a `download` option that is not a function", () => {
    const create = createPai as (options: unknown) => unknown;
    let caught: unknown;
    try {
      create({
        agents: { main: agent },
        storage: memoryStorage(),
        model: scriptedModel([]),
        scope: () => ({ scopeKey: "s" }),
        download: true,
      });
    } catch (error) {
      caught = error;
    }
    expect(PaiError.isInstance(caught) && caught.code).toBe("INVALID_DEFINITION");
  });
});

describe("file part URL schemes", () => {
  it("refuses other schemes, unparsable URLs and empty data: URLs with INVALID_INPUT naming the field, and stores nothing", async () => {
    const runtime = await createTestRuntime({ agent, model: [] });
    try {
      const threadId = await runtime.createThread();
      const service = runtime.pai.service;
      const before = await service.threads.get({ identity: runtime.identity, threadId });
      for (const url of [
        "javascript:alert(1)",
        "JavaScript:alert(1)",
        " javascript:alert(1)",
        "file:///etc/passwd",
        "ftp://files.example.com/a.txt",
        "blob:https://app.example.com/0b1c",
        "/relative/path.txt",
        "not a url",
        "data:text/plain;base64",
      ]) {
        const error = await rejection(
          service.threads.send({
            identity: runtime.identity,
            threadId,
            message: {
              parts: [
                { type: "text", text: "x" },
                { type: "file", mediaType: "text/plain", url },
              ],
            },
          }),
        );
        expect([url, error.code]).toEqual([url, "INVALID_INPUT"]);
        expect(error.message).toMatch(/^message\.parts\[1\]\.url /);
        expect(error.message).toMatch(/https:, http: or data: URL|data: URL without data/);
        expect(error.issues?.[0]?.path).toEqual(["message", "parts", 1, "url"]);
      }
      // Nothing was written: no message, no run.
      expect(await service.threads.get({ identity: runtime.identity, threadId })).toEqual(before);
    } finally {
      await runtime.close();
    }
  });

  it("refuses a file part or an upload whose media type holds control characters or is not type/subtype", async () => {
    const runtime = await createTestRuntime({ agent, model: [], files: memoryFiles() });
    try {
      const threadId = await runtime.createThread();
      const service = runtime.pai.service;
      for (const mediaType of ["text/plain; x=\u0001", "text/plain\r\nX-Injected: 1", "plain", ""]) {
        const sent = await rejection(
          service.threads.send({
            identity: runtime.identity,
            threadId,
            message: { parts: [{ type: "file", mediaType, url: "https://files.example/a.txt" }] },
          }),
        );
        expect([mediaType, sent.code]).toEqual([mediaType, "INVALID_INPUT"]);
        const uploaded = await rejection(
          service.files.upload({
            identity: runtime.identity,
            threadId,
            filename: "a.txt",
            mediaType,
            body: new Uint8Array([65]),
          } as never),
        );
        expect([mediaType, uploaded.code]).toEqual([mediaType, "INVALID_INPUT"]);
      }
    } finally {
      await runtime.close();
    }
  });

  it("accepts https:, http: and data: URLs", async () => {
    const runtime = await createTestRuntime({ agent, model: [{ text: "ok" }] });
    try {
      const threadId = await runtime.createThread();
      const snapshot = await runtime.send(threadId, {
        parts: [
          { type: "file", mediaType: "application/pdf", url: "https://files.example.com/a.pdf" },
          { type: "file", mediaType: "image/png", url: "HTTP://files.example.com/b.png" },
          { type: "file", mediaType: "text/plain", url: "data:text/plain;base64,aGVsbG8=" },
        ],
      });
      expect(snapshot.runs.at(-1)?.status).toBe("completed");
      const parts = filePartsInCall(runtime.model as ScriptedModel, 0);
      expect(parts.map((part) => part.data.type)).toEqual(["url", "url", "data"]);
    } finally {
      await runtime.close();
    }
  });
});
