import { createHash, randomUUID } from "node:crypto";
import v8 from "node:v8";
import vm from "node:vm";
import { ListObjectsV2Command } from "@aws-sdk/client-s3";
import { PaiError } from "@pai/core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { s3Files } from "../src/index.js";
import { type S3rverFixture, startS3rver } from "./s3rver-fixture.js";

const encoder = new TextEncoder();
let s3: S3rverFixture;

beforeAll(async () => {
  s3 = await startS3rver("pai-behaviour");
});

afterAll(async () => {
  await s3?.[Symbol.asyncDispose]();
});

async function listKeys(prefix: string): Promise<string[]> {
  const result = await s3.client.send(new ListObjectsV2Command({ Bucket: s3.bucket, Prefix: prefix }));
  return (result.Contents ?? []).map((object) => object.Key!).sort();
}

describe("s3Files keys", () => {
  it("builds keys from prefix, scope hash and file id only", async () => {
    const prefix = `keys-${randomUUID()}`;
    const files = s3Files({ client: s3.client, bucket: s3.bucket, prefix: `/${prefix}/` });
    const scopeKey = "tenant/../other";
    const saved = await files.save({
      scopeKey,
      userKey: "u",
      threadId: "t",
      body: encoder.encode("x"),
      mediaType: "text/plain",
      filename: "../../../escape/Bericht März.txt",
    });
    const scopeHash = createHash("sha256").update(scopeKey).digest("hex");
    expect(await listKeys(prefix)).toEqual([
      `${prefix}/${scopeHash}/${saved.fileId}`,
      `${prefix}/${scopeHash}/${saved.fileId}.json`,
    ]);
  });
});

describe("s3Files presigned downloads", () => {
  it("returns a URL that downloads the exact bytes with the file's type and name", async () => {
    const files = s3Files({ client: s3.client, bucket: s3.bucket, presign: { expiresInSeconds: 120 } });
    const bytes = new Uint8Array(70_000).map((_, index) => (index * 13) & 0xff);
    const saved = await files.save({
      scopeKey: "tenant-presign",
      userKey: null,
      threadId: null,
      body: bytes,
      mediaType: "text/csv",
      filename: "Umsätze 2024.csv",
    });
    const url = await files.getDownloadUrl!({ scopeKey: "tenant-presign", fileId: saved.fileId });
    expect(url).toContain("X-Amz-Signature=");
    expect(url).toContain("X-Amz-Expires=120");
    const response = await fetch(url);
    expect(response.status).toBe(200);
    expect(new Uint8Array(await response.arrayBuffer())).toEqual(bytes);
    expect(response.headers.get("content-type")).toBe("text/csv");
    expect(response.headers.get("content-disposition")).toBe(
      `attachment; filename="Ums_tze 2024.csv"; filename*=UTF-8''Ums%C3%A4tze%202024.csv`,
    );

    const shorter = await files.getDownloadUrl!({
      scopeKey: "tenant-presign",
      fileId: saved.fileId,
      expiresInSeconds: 5,
    });
    expect(shorter).toContain("X-Amz-Expires=5");
    // s3rver does not verify SigV4 signatures, so a tampered-URL check would prove nothing here.
    expect(url).toContain("X-Amz-Credential=S3RVER");

    const error = await files.getDownloadUrl!({
      scopeKey: "tenant-presign",
      fileId: saved.fileId,
      expiresInSeconds: 0,
    }).catch((caught: unknown) => caught);
    expect(PaiError.isInstance(error) && error.code).toBe("INVALID_INPUT");
  });

  it("has no getDownloadUrl unless presign is configured", () => {
    expect(s3Files({ client: s3.client, bucket: s3.bucket }).getDownloadUrl).toBeUndefined();
  });
});

describe("s3Files large uploads", () => {
  it("streams a 50 MB upload without holding the body in memory", { timeout: 180_000 }, async () => {
    const prefix = `large-${randomUUID()}`;
    const files = s3Files({ client: s3.client, bucket: s3.bucket, prefix });
    const total = 50 * 1024 * 1024;
    const chunkSize = 256 * 1024;
    const hash = createHash("sha256");
    async function* produce(): AsyncGenerator<Uint8Array> {
      for (let offset = 0; offset < total; offset += chunkSize) {
        // A fresh buffer per chunk: the body is produced lazily and can be garbage collected.
        const chunk = new Uint8Array(chunkSize).fill(offset / chunkSize);
        hash.update(chunk);
        yield chunk;
      }
    }

    // Raw peaks count garbage that simply was not collected yet, so we also force a GC every
    // 4 MiB produced and track what is still alive then: that is what the upload holds.
    v8.setFlagsFromString("--expose-gc");
    const gc = vm.runInNewContext("gc") as () => void;
    gc();
    const base = process.memoryUsage();
    const baseLive = base.heapUsed + base.arrayBuffers;
    let peakRss = base.rss;
    let peakLive = baseLive;
    const timer = setInterval(() => {
      peakRss = Math.max(peakRss, process.memoryUsage.rss());
    }, 5);
    let produced = 0;
    const saved = await files.save({
      scopeKey: "tenant-large",
      userKey: null,
      threadId: null,
      body: (async function* () {
        for await (const chunk of produce()) {
          if (++produced % 16 === 0) {
            // V8 frees ArrayBuffer memory after a GC asynchronously; give it a turn before measuring.
            gc();
            await new Promise((resolve) => setImmediate(resolve));
            gc();
            const now = process.memoryUsage();
            peakLive = Math.max(peakLive, now.heapUsed + now.arrayBuffers);
          }
          yield chunk;
        }
      })(),
      mediaType: "application/octet-stream",
      filename: "large.bin",
    });
    clearInterval(timer);

    const mib = (bytes: number) => (bytes / 1024 / 1024).toFixed(1);
    const rssGrowth = peakRss - base.rss;
    const liveGrowth = peakLive - baseLive;
    console.log(
      `[files-s3] 50 MiB streaming upload (partSize 5 MiB, queueSize 2): peak RSS growth ${mib(rssGrowth)} MiB, ` +
        `peak live heap+ArrayBuffer growth after GC ${mib(liveGrowth)} MiB (s3rver runs in a child process)`,
    );
    expect(saved.size).toBe(total);
    // The SDK holds up to queueSize parts in flight (2 x 5 MiB) plus the part being filled and
    // its concatenated copy: about 20 MiB. Holding the whole body would be 50 MiB or more.
    expect(liveGrowth).toBeLessThan(30 * 1024 * 1024);

    const read = await files.read({ scopeKey: "tenant-large", fileId: saved.fileId });
    const check = createHash("sha256");
    let size = 0;
    for await (const chunk of read.body as unknown as AsyncIterable<Uint8Array>) {
      check.update(chunk);
      size += chunk.byteLength;
    }
    expect(size).toBe(total);
    expect(check.digest("hex")).toBe(hash.digest("hex"));
  });
});
