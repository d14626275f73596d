import { randomUUID } from "node:crypto";
import { mkdtemp, readdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createPaiClient, isPaiToolPart, type ThreadClient } from "@pai/client";
import { createPai, defineAgent, defineTool, type FilesV1, type Pai, PaiError } from "@pai/core";
import { scriptedModel } from "@pai/core/testing";
import { localFiles } from "@pai/files-local";
import { s3Files } from "@pai/files-s3";
import { memoryStorage } from "@pai/storage-memory";
import { createTRPCClient, httpBatchLink, isTRPCClientError } from "@trpc/client";
import superjson from "superjson";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { type S3rverFixture, startS3rver } from "../../files-s3/test/s3rver-fixture.js";
import {
  type HostRouter,
  type HostUser,
  hostScope,
  type RunningHost,
  startHost,
  transportFor,
} from "./host-app.js";

// Issue 9 acceptance, transport side: the real runtime (scripted model) with S3 files on an
// s3rver started here and with local-disk files, served by the example host app over real
// HTTP on 127.0.0.1 and reached with @trpc/client.

const alice: HostUser = { userId: "alice", scopeKey: "acme" };
const bob: HostUser = { userId: "bob", scopeKey: "acme" };
const mallory: HostUser = { userId: "mallory", scopeKey: "evil" };

/** A CSV with non-ASCII text and a byte-exact body to compare after the round trip. */
function reportCsv(rows: number): string {
  const lines = ["city,visits"];
  for (let index = 0; index < rows; index++) lines.push(`Zürich-${index},${index * 7}`);
  return `${lines.join("\n")}\n`;
}

const saveReport = defineTool({
  id: "test.files.trpc-save-report.v1",
  description: "Save a CSV report and return its file id",
  inputSchema: z.object({ rows: z.number().int() }),
  outputSchema: z.object({ fileId: z.string() }),
  execute: async (ctx) => {
    const file = await ctx.files.save({
      body: new TextEncoder().encode(reportCsv(ctx.input.rows)),
      mediaType: "text/csv",
      filename: "report.csv",
    });
    return { fileId: file.fileId };
  },
});

const agent = defineAgent({ name: "main", tools: { saveReport } });

let s3: S3rverFixture;
const directories: string[] = [];
const hosts: RunningHost[] = [];
const runtimes: Pai<Record<string, typeof agent>>[] = [];

beforeAll(async () => {
  s3 = await startS3rver();
});

afterEach(async () => {
  await Promise.all(hosts.splice(0).map((host) => host.close()));
  await Promise.all(runtimes.splice(0).map((runtime) => runtime.close()));
});

afterAll(async () => {
  await s3?.[Symbol.asyncDispose]();
  await Promise.all(directories.map((directory) => rm(directory, { recursive: true, force: true })));
});

async function tempDirectory(): Promise<string> {
  const directory = await mkdtemp(join(tmpdir(), "pai-trpc-files-"));
  directories.push(directory);
  return directory;
}

type Provider = { name: string; create(): Promise<FilesV1> };

const providers: Provider[] = [
  {
    name: "S3 files on s3rver",
    create: async () => s3Files({ client: s3.client, bucket: s3.bucket, prefix: `trpc/${randomUUID()}` }),
  },
  { name: "local files", create: async () => localFiles({ directory: await tempDirectory() }) },
];

async function start(files: FilesV1, options: Parameters<typeof startHost>[1] = {}) {
  const pai = createPai({
    agents: { main: agent },
    storage: memoryStorage(),
    files,
    // "save N" calls the tool; after its result the model says "Saved.".
    model: scriptedModel((call) => {
      const last = call.prompt.at(-1);
      if (last?.role === "tool") return { text: "Saved." };
      const text = Array.isArray(last?.content)
        ? last.content.map((part) => (part.type === "text" ? part.text : "")).join("")
        : "";
      return { toolCalls: [{ toolName: "saveReport", input: { rows: Number(text.split(" ")[1] ?? 1) } }] };
    }),
    scope: hostScope,
  });
  runtimes.push(pai);
  const host = await startHost(pai.service, options);
  hosts.push(host);
  return host;
}

/** The host's typed tRPC client for one user (queries and mutations only). */
function typedClient(url: string, user: HostUser) {
  return createTRPCClient<HostRouter>({
    links: [
      httpBatchLink({
        url,
        transformer: superjson,
        headers: { authorization: `Bearer ${user.userId}:${user.scopeKey}` },
      }),
    ],
  });
}

/** Sends `text` over tRPC and polls until the run completed; returns the tool's output. */
async function runTool(thread: ThreadClient, text: string): Promise<{ fileId: string }> {
  await thread.send(text);
  for (let attempt = 0; attempt < 250; attempt++) {
    const state = await thread.refresh();
    if (state.run?.status === "failed") throw new Error(`The run failed: ${JSON.stringify(state.run)}`);
    if (state.run?.status === "completed") {
      const part = state.messages.flatMap((message) => message.parts).find(isPaiToolPart);
      expect(part?.state).toBe("output-available");
      return part?.output as { fileId: string };
    }
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  throw new Error("The run never completed.");
}

async function rejection(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => {
      throw new Error("expected a rejection");
    },
    (caught: unknown) => caught,
  );
}

async function paiRejection(promise: Promise<unknown>): Promise<PaiError> {
  const error = await rejection(promise);
  if (!PaiError.isInstance(error)) throw error;
  return error;
}

function trpcStatus(error: unknown): { code: string | undefined; httpStatus: number | undefined } {
  if (!isTRPCClientError(error)) throw error;
  const data = error.data as { code?: string; httpStatus?: number } | undefined;
  return { code: data?.code, httpStatus: data?.httpStatus };
}

describe.each(providers)("files over tRPC with $name", (provider) => {
  it("a tool saves a CSV with ctx.files.save and a tRPC client downloads the same bytes", async () => {
    const host = await start(await provider.create());
    const client = createPaiClient({ transport: transportFor(host.url, alice) });
    const thread = await client.createThread({ title: "report" });
    const { fileId } = await runTool(thread, "save 40");
    const expected = new TextEncoder().encode(reportCsv(40));

    const downloaded = await client.files.download(fileId);
    expect(downloaded.bytes).toEqual(expected);
    expect(downloaded.file).toMatchObject({
      fileId,
      userKey: "alice",
      threadId: thread.id,
      filename: "report.csv",
      mediaType: "text/csv",
      size: expected.byteLength,
    });

    // The same file through the host's typed @trpc/client, the way any tRPC app would call it.
    // No file output names the tenant: a client only ever sees its own.
    expect(downloaded.file).not.toHaveProperty("scopeKey");
    const raw = await typedClient(host.url, alice).pai.files.get.query({ fileId });
    expect(raw.file).not.toHaveProperty("scopeKey");
    expect(raw.downloadUrl).toBeNull();
    expect(Buffer.from(raw.body ?? "", "base64")).toEqual(Buffer.from(expected));

    // Files are scoped to the tenant, not the user: a colleague in the same scope reads it too.
    const colleague = createPaiClient({ transport: transportFor(host.url, bob) });
    expect((await colleague.files.download(fileId)).bytes).toEqual(expected);
  });

  it("uploads a Blob and bytes, and downloads them back", async () => {
    const host = await start(await provider.create());
    const client = createPaiClient({ transport: transportFor(host.url, alice) });
    const thread = await client.createThread();
    const text = "name,score\nada,3\n";
    const asFile = await client.files.upload({
      file: new File([text], "scores.csv", { type: "text/csv" }),
      threadId: thread.id,
      metadata: { source: "test" },
    });
    expect(asFile).toMatchObject({
      filename: "scores.csv",
      mediaType: "text/csv",
      size: text.length,
      threadId: thread.id,
      metadata: { source: "test" },
    });
    expect(new TextDecoder().decode((await client.files.download(asFile.fileId)).bytes)).toBe(text);

    const bytes = new Uint8Array(200_000).map((_, index) => (index * 31) % 256);
    const asBytes = await client.files.upload({ file: bytes, filename: "blob.bin" });
    expect(asBytes.mediaType).toBe("application/octet-stream");
    // Buffer#equals: a deep toEqual over 200k typed-array elements takes seconds.
    expect(Buffer.from((await client.files.download(asBytes.fileId)).bytes).equals(bytes)).toBe(true);
    const empty = await client.files.upload({
      file: new Blob([]),
      filename: "empty.txt",
      mediaType: "text/plain",
    });
    expect((await client.files.download(empty.fileId)).bytes).toEqual(new Uint8Array(0));
  });

  it("another scope gets NOT_FOUND from every file procedure, exactly like a missing file", async () => {
    const host = await start(await provider.create());
    const owner = createPaiClient({ transport: transportFor(host.url, alice) });
    const thread = await owner.createThread();
    const { fileId } = await runTool(thread, "save 3");
    const intruder = createPaiClient({ transport: transportFor(host.url, mallory) });

    const attempts: Array<[string, () => Promise<unknown>]> = [
      ["download", () => intruder.files.download(fileId)],
      ["download inline", () => intruder.files.download(fileId, { inline: true })],
      ["get", () => intruder.files.get({ fileId })],
      [
        "upload into the owner's thread",
        () => intruder.files.upload({ file: new Uint8Array([1]), filename: "x.txt", threadId: thread.id }),
      ],
      ["missing file", () => owner.files.download("file_does_not_exist")],
    ];
    for (const [name, attempt] of attempts) {
      const error = await paiRejection(attempt());
      expect([name, error.code]).toEqual([name, "NOT_FOUND"]);
    }
    const raw = await rejection(typedClient(host.url, mallory).pai.files.get.query({ fileId }));
    expect(trpcStatus(raw)).toEqual({ code: "NOT_FOUND", httpStatus: 404 });
    // The owner still reads it.
    expect((await owner.files.download(fileId)).file.fileId).toBe(fileId);
  });

  it("rejects uploads over the size limit (PAYLOAD_TOO_LARGE) and outside the media-type allowlist (INVALID_INPUT)", async () => {
    const host = await start(await provider.create(), {
      limits: { maxUploadBytes: 4096 },
      files: { allowedMediaTypes: ["text/csv", "image/*"] },
    });
    const client = createPaiClient({ transport: transportFor(host.url, alice) });

    const atLimit = await client.files.upload({
      file: new Uint8Array(4096).fill(65),
      filename: "full.csv",
      mediaType: "text/csv",
    });
    expect(atLimit.size).toBe(4096);
    const tooBig = await paiRejection(
      client.files.upload({ file: new Uint8Array(4097), filename: "big.csv", mediaType: "text/csv" }),
    );
    expect(tooBig.code).toBe("PAYLOAD_TOO_LARGE");
    expect(tooBig.message).toContain("4097 bytes");
    expect(tooBig.message).toContain("limited to 4096 bytes");

    const raw = typedClient(host.url, alice);
    const rawTooBig = await rejection(
      raw.pai.files.upload.mutate({
        filename: "big.csv",
        mediaType: "text/csv",
        body: Buffer.alloc(50_000).toString("base64"),
      }),
    );
    expect(trpcStatus(rawTooBig)).toEqual({ code: "PAYLOAD_TOO_LARGE", httpStatus: 413 });

    const disallowed = await paiRejection(
      client.files.upload({ file: new Uint8Array([1]), filename: "run.sh", mediaType: "application/x-sh" }),
    );
    expect(disallowed.code).toBe("INVALID_INPUT");
    expect(disallowed.message).toContain('"application/x-sh"');
    expect(disallowed.message).toContain("text/csv, image/*");
    expect(disallowed.issues).toEqual([{ path: ["mediaType"], message: disallowed.message }]);
    const rawDisallowed = await rejection(
      raw.pai.files.upload.mutate({ filename: "a.html", mediaType: "text/html", body: "PGI+" }),
    );
    expect(trpcStatus(rawDisallowed)).toEqual({ code: "BAD_REQUEST", httpStatus: 400 });

    // Bodies that are not base64 are refused by the schema, never by `atob` on the server (500).
    for (const body of ["==", "AB=", "A", "QUJD=", "QU=I", "QUJD\n"]) {
      const refused = await rejection(
        raw.pai.files.upload.mutate({ filename: "a.csv", mediaType: "text/csv", body }),
      );
      expect(trpcStatus(refused), body).toEqual({ code: "BAD_REQUEST", httpStatus: 400 });
    }
    // Padded and unpadded short groups are base64.
    for (const [body, size] of [
      ["QQ==", 1],
      ["QQ", 1],
      ["QUI=", 2],
      ["QUI", 2],
      ["", 0],
    ] as const) {
      const uploaded = await raw.pai.files.upload.mutate({ filename: "a.csv", mediaType: "text/csv", body });
      expect(uploaded.size, body).toBe(size);
      expect(uploaded).not.toHaveProperty("scopeKey");
    }

    // Parameters and case do not matter; a wildcard admits its whole top-level type.
    for (const mediaType of ["Text/CSV; charset=utf-8", "image/png", "image/svg+xml"]) {
      const file = await client.files.upload({ file: new Uint8Array([1, 2]), filename: "ok", mediaType });
      expect(file.mediaType).toBe(mediaType);
    }
    // A media type is copied into Content-Type headers: no control characters in its parameters.
    for (const mediaType of ["text/csv; x=\u0001", "text/csv;\r\nX-Injected: 1", "text/csv\t"]) {
      const refused = await rejection(
        raw.pai.files.upload.mutate({ filename: "a.csv", mediaType, body: "QQ==" }),
      );
      expect(trpcStatus(refused), JSON.stringify(mediaType)).toEqual({
        code: "BAD_REQUEST",
        httpStatus: 400,
      });
    }
  });
});

describe("presigned downloads (s3Files with presign, on s3rver)", () => {
  it("files.get returns a URL to the bucket and client.files.download follows it to the same bytes", async () => {
    const host = await start(
      s3Files({
        client: s3.client,
        bucket: s3.bucket,
        prefix: `presign/${randomUUID()}`,
        presign: { expiresInSeconds: 120 },
      }),
    );
    const client = createPaiClient({ transport: transportFor(host.url, alice) });
    const thread = await client.createThread();
    const { fileId } = await runTool(thread, "save 25");
    const expected = new TextEncoder().encode(reportCsv(25));

    const raw = await typedClient(host.url, alice).pai.files.get.query({ fileId });
    expect(raw.body).toBeNull();
    expect(raw.downloadUrl?.startsWith(`${s3.endpoint}/${s3.bucket}/presign/`)).toBe(true);
    expect(raw.downloadUrl).toContain("X-Amz-Signature=");
    expect(raw.file).toMatchObject({ fileId, size: expected.byteLength, mediaType: "text/csv" });

    // Follows the URL with fetch: the bytes come from s3rver, not through the tRPC server.
    const fetched: string[] = [];
    const tracking = createPaiClient({
      transport: transportFor(host.url, alice),
      fetch: (input, init) => {
        fetched.push(String(input));
        return fetch(input, init);
      },
    });
    const downloaded = await tracking.files.download(fileId);
    expect(downloaded.bytes).toEqual(expected);
    expect(downloaded.file.filename).toBe("report.csv");
    expect(fetched).toHaveLength(1);
    expect(fetched[0]?.startsWith(s3.endpoint)).toBe(true);

    // inline: true still returns the bytes through tRPC.
    expect((await client.files.download(fileId, { inline: true })).bytes).toEqual(expected);

    // Another scope never gets a URL.
    const intruder = createPaiClient({ transport: transportFor(host.url, mallory) });
    expect((await paiRejection(intruder.files.download(fileId))).code).toBe("NOT_FOUND");

    // A URL the bucket refuses is reported as a PaiError. (s3rver does not verify SigV4
    // signatures, so the credential is forged instead of the signature.)
    const tampered = createPaiClient({
      transport: transportFor(host.url, alice),
      fetch: (input, init) =>
        fetch(String(input).replace("X-Amz-Credential=S3RVER", "X-Amz-Credential=FORGED"), init),
    });
    const refused = await paiRejection(tampered.files.download(fileId));
    expect(refused.code).toBe("FORBIDDEN");
    expect(refused.message).toContain("HTTP 403");
  });
});

describe("local files on disk", () => {
  it("keep what a client uploads below the configured directory", async () => {
    const directory = await tempDirectory();
    const host = await start(localFiles({ directory }));
    const client = createPaiClient({ transport: transportFor(host.url, alice) });
    const file = await client.files.upload({
      file: new Uint8Array([7, 8, 9]),
      filename: "../../escape.txt",
      mediaType: "text/plain",
    });
    expect(file.filename).toBe("../../escape.txt");
    expect((await client.files.download(file.fileId)).bytes).toEqual(new Uint8Array([7, 8, 9]));
    const entries = await readdir(directory, { recursive: true });
    expect(entries.some((entry) => entry.includes(file.fileId))).toBe(true);
    expect(entries.some((entry) => entry.includes("escape"))).toBe(false);
  });
});
