import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { createPai, defineAgent, type FilesV1, PaiError, scopeFromIdentity } from "@pai/core";
import { scriptedModel } from "@pai/core/testing";
import { memoryFiles, memoryStorage } from "@pai/storage-memory";
import { afterEach, describe, expect, it } from "vitest";
import { createPaiClient, serviceTransport } from "../src/index.js";

// client.files over the in-process transport and a real runtime with memory files. Download
// URLs point at a small HTTP server started here that serves the stored bytes, so following
// them goes through a real fetch.

const identity = { scopeKey: "acme", userKey: "alice" };
const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** memoryFiles with download URLs served by a loopback server; `/status/<n>/…` answers n. */
async function presigningFiles(): Promise<FilesV1> {
  const inner = memoryFiles();
  const server: Server = createServer(async (request, response) => {
    const [, kind, scopeKey, fileId] = (request.url ?? "").split("/");
    if (kind === "status") {
      response.writeHead(Number(scopeKey)).end("refused");
      return;
    }
    try {
      const file = await inner.read({ scopeKey: decodeURIComponent(scopeKey), fileId });
      response.writeHead(200, { "content-type": file.mediaType }).end(await file.bytes());
    } catch {
      response.writeHead(404).end();
    }
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  cleanups.push(() => new Promise((resolve) => server.close(() => resolve())));
  const { port } = server.address() as AddressInfo;
  return {
    specificationVersion: "v1",
    name: "memory-presigned",
    save: (input) => inner.save(input),
    head: (input) => inner.head(input),
    read: (input) => inner.read(input),
    delete: (input) => inner.delete(input),
    getDownloadUrl: async ({ scopeKey, fileId }) =>
      `http://127.0.0.1:${port}/files/${encodeURIComponent(scopeKey)}/${fileId}`,
  };
}

async function clientWith(files: FilesV1, fetchImpl?: typeof fetch) {
  const pai = createPai({
    scope: scopeFromIdentity,
    agents: { main: defineAgent({ name: "main" }) },
    storage: memoryStorage(),
    files,
    // No test here runs the model.
    model: scriptedModel([]),
  });
  cleanups.push(() => pai.close());
  return createPaiClient({
    transport: serviceTransport({ service: pai.service, identity }),
    ...(fetchImpl ? { fetch: fetchImpl } : {}),
  });
}

describe("client.files", () => {
  it("takes the filename and media type from a File, and bytes need an explicit filename", async () => {
    const client = await clientWith(memoryFiles());
    const uploaded = await client.files.upload({ file: new File(["a,b\n"], "t.csv", { type: "text/csv" }) });
    expect(uploaded).toMatchObject({ filename: "t.csv", mediaType: "text/csv", size: 4 });
    expect(uploaded).not.toHaveProperty("scopeKey");
    const renamed = await client.files.upload({
      file: new File(["x"], "ignored.txt", { type: "text/plain" }),
      filename: "kept.md",
      mediaType: "text/markdown",
    });
    expect(renamed).toMatchObject({ filename: "kept.md", mediaType: "text/markdown" });
    const blob = await client.files.upload({
      file: new Blob(["{}"], { type: "application/json" }),
      filename: "b",
    });
    expect(blob.mediaType).toBe("application/json");

    const error = await client.files.upload({ file: new Uint8Array([1]) } as never).catch((caught) => caught);
    expect(PaiError.isInstance(error) && error.code).toBe("INVALID_INPUT");
    expect((error as Error).message).toContain("filename");
    const notBytes = await client.files
      .upload({ file: "text" as never, filename: "x" })
      .catch((caught) => caught);
    expect(PaiError.isInstance(notBytes) && notBytes.code).toBe("INVALID_INPUT");
  });

  it("download returns inline bytes, or follows the provider's download URL", async () => {
    const inlineClient = await clientWith(memoryFiles());
    const saved = await inlineClient.files.upload({ file: new Uint8Array([1, 2, 3]), filename: "a.bin" });
    expect(await inlineClient.files.download(saved.fileId)).toEqual({
      file: saved,
      bytes: new Uint8Array([1, 2, 3]),
    });

    const fetched: string[] = [];
    const client = await clientWith(await presigningFiles(), (input, init) => {
      fetched.push(String(input));
      return fetch(input, init);
    });
    const file = await client.files.upload({ file: new TextEncoder().encode("hello"), filename: "h.txt" });
    const raw = await client.files.get({ fileId: file.fileId });
    expect(raw.downloadUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/files\/acme\//);
    const downloaded = await client.files.download(file.fileId);
    expect(new TextDecoder().decode(downloaded.bytes)).toBe("hello");
    expect(downloaded.file).toEqual(file);
    expect(fetched).toEqual([raw.downloadUrl]);
    // inline skips the URL.
    expect((await client.files.download(file.fileId, { inline: true })).bytes).toEqual(downloaded.bytes);
    expect(fetched).toHaveLength(1);
  });

  it("maps a refused download URL to a PaiError and keeps an abort as an abort", async () => {
    for (const [status, code] of [
      [404, "NOT_FOUND"],
      [403, "FORBIDDEN"],
      [500, "INTERNAL"],
    ] as const) {
      const client = await clientWith(await presigningFiles(), (input, init) =>
        fetch(String(input).replace("/files/", `/status/${status}/`), init),
      );
      const file = await client.files.upload({ file: new Uint8Array([1]), filename: "x" });
      const error = await client.files.download(file.fileId).catch((caught) => caught);
      expect([status, PaiError.isInstance(error) && error.code]).toEqual([status, code]);
      expect((error as Error).message).toContain(`HTTP ${status}`);
    }

    const client = await clientWith(await presigningFiles());
    const file = await client.files.upload({ file: new Uint8Array([1]), filename: "x" });
    const controller = new AbortController();
    controller.abort();
    const aborted = await client.files
      .download(file.fileId, { signal: controller.signal })
      .catch((caught) => caught);
    expect((aborted as Error).name).toBe("AbortError");

    const unreachable = await clientWith(await presigningFiles(), () =>
      fetch("http://127.0.0.1:1/unreachable"),
    );
    const other = await unreachable.files.upload({ file: new Uint8Array([1]), filename: "x" });
    const failed = await unreachable.files.download(other.fileId).catch((caught) => caught);
    expect(PaiError.isInstance(failed) && failed.code).toBe("INTERNAL");
    expect((failed as Error).message).toContain("inline: true");
  });
});
