import { createHash, randomBytes } from "node:crypto";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { FileBody, FilesV1, SaveFileInput } from "../ports/files.js";
import {
  caught,
  encoder,
  expectInvalid,
  expectNotFound,
  expectRecord,
  input,
  iterableOf,
  patternChunk,
  scope,
  streamDigest,
  streamOf,
} from "./files-conformance-helpers.js";

/** Options for `runFilesConformance`. */
export type FilesConformanceOptions = {
  /** Shown in the suite title, e.g. "memory" or "s3 (s3rver)". */
  name: string;
  /** Makes a provider; called before each test. Tests use fresh random scope keys, so state may be shared. */
  create: () => FilesV1 | Promise<FilesV1>;
  /** Tears a provider down after each test; defaults to `files.close?.()`. */
  dispose?: (files: FilesV1) => void | Promise<void>;
  /** Skips the whole suite (e.g. a local run without the backing server; never under CI). */
  skip?: boolean;
  /** Size of the streamed large-body test in bytes; 8 MiB unless given. */
  largeBodyBytes?: number;
};

/**
 * Registers the `FilesV1` conformance tests (vitest) for one provider. Every provider runs
 * the same suite: round trips for each body shape, scope isolation, deletion, id and
 * filename safety, streaming of a large body and abort handling.
 */
export function runFilesConformance(options: FilesConformanceOptions): void {
  const largeBodyBytes = options.largeBodyBytes ?? 8 * 1024 * 1024;

  describe.skipIf(options.skip === true)(`FilesV1 conformance: ${options.name}`, () => {
    let files: FilesV1;

    beforeEach(async () => {
      files = await options.create();
    });

    afterEach(async () => {
      if (options.dispose) await options.dispose(files);
      else await files.close?.();
    });

    it("declares the v1 port and a name", () => {
      expect(files.specificationVersion).toBe("v1");
      expect(typeof files.name).toBe("string");
      expect(files.name.length).toBeGreaterThan(0);
    });

    it("saves, heads and reads back bytes and the full record", async () => {
      const scopeKey = scope();
      const bytes = encoder.encode("hello, files\n");
      const before = Date.now();
      const saved = await files.save(
        input(scopeKey, bytes, {
          mediaType: "text/csv",
          filename: "report.csv",
          metadata: { kind: "report", rows: 3, nested: { ok: true, tags: ["a", "b"] } },
          size: bytes.byteLength,
        }),
      );
      const after = Date.now();
      const expected = {
        scopeKey,
        userKey: "user-1",
        threadId: "thread-1",
        filename: "report.csv",
        mediaType: "text/csv",
        size: bytes.byteLength,
        metadata: { kind: "report", rows: 3, nested: { ok: true, tags: ["a", "b"] } },
      };
      expectRecord(saved, expected);
      const created = Date.parse(saved.createdAt);
      expect(created).toBeGreaterThanOrEqual(before - 1000);
      expect(created).toBeLessThanOrEqual(after + 1000);

      const head = await files.head({ scopeKey, fileId: saved.fileId });
      expect(head).toEqual(saved);

      const read = await files.read({ scopeKey, fileId: saved.fileId });
      const { body, bytes: _bytes, text: _text, ...record } = read;
      expect(record).toEqual(saved);
      expect(await read.bytes()).toEqual(bytes);
    });

    it("stores null userKey, threadId and metadata when they are absent", async () => {
      const scopeKey = scope();
      const saved = await files.save({
        scopeKey,
        userKey: null,
        threadId: null,
        body: encoder.encode("x"),
        mediaType: "application/octet-stream",
        filename: "x.bin",
      });
      expectRecord(saved, {
        scopeKey,
        userKey: null,
        threadId: null,
        filename: "x.bin",
        mediaType: "application/octet-stream",
        size: 1,
        metadata: null,
      });
      expect(await files.head({ scopeKey, fileId: saved.fileId })).toEqual(saved);
    });

    it("accepts a ReadableStream body", async () => {
      const scopeKey = scope();
      const chunks = [encoder.encode("alpha,"), encoder.encode("beta,"), encoder.encode("gamma")];
      const saved = await files.save(input(scopeKey, streamOf(chunks)));
      expect(saved.size).toBe(16);
      const read = await files.read({ scopeKey, fileId: saved.fileId });
      expect(await read.text()).toBe("alpha,beta,gamma");
    });

    it("accepts an AsyncIterable body", async () => {
      const scopeKey = scope();
      const chunks = [encoder.encode("one "), encoder.encode("two "), encoder.encode("three")];
      const saved = await files.save(input(scopeKey, iterableOf(chunks)));
      expect(saved.size).toBe(13);
      const read = await files.read({ scopeKey, fileId: saved.fileId });
      expect(await read.text()).toBe("one two three");
    });

    it("round-trips an empty body for every body shape", async () => {
      const scopeKey = scope();
      for (const body of [new Uint8Array(0), streamOf([]), iterableOf([])] as FileBody[]) {
        const saved = await files.save(input(scopeKey, body, { filename: "empty.txt" }));
        expect(saved.size).toBe(0);
        expect((await files.head({ scopeKey, fileId: saved.fileId })).size).toBe(0);
        const read = await files.read({ scopeKey, fileId: saved.fileId });
        expect(await read.bytes()).toEqual(new Uint8Array(0));
      }
    });

    it("keeps binary bytes exact (every byte value, NUL and invalid UTF-8)", async () => {
      const scopeKey = scope();
      const bytes = new Uint8Array(4096 + 3);
      for (let i = 0; i < bytes.length; i++) bytes[i] = i % 256;
      bytes.set([0xff, 0xfe, 0x00], 4096);
      const saved = await files.save(
        input(scopeKey, bytes, { mediaType: "application/octet-stream", filename: "all.bin" }),
      );
      expect(saved.size).toBe(bytes.length);
      const read = await files.read({ scopeKey, fileId: saved.fileId });
      expect(await read.bytes()).toEqual(bytes);
    });

    it("reads the body as a stream", async () => {
      const scopeKey = scope();
      const bytes = randomBytes(200_000);
      const saved = await files.save(input(scopeKey, new Uint8Array(bytes)));
      const read = await files.read({ scopeKey, fileId: saved.fileId });
      expect(read.body).toBeInstanceOf(ReadableStream);
      const digest = await streamDigest(read.body);
      expect(digest).toEqual({
        size: bytes.length,
        sha256: createHash("sha256").update(bytes).digest("hex"),
      });
    });

    it("does not keep a reference to the caller's buffer", async () => {
      const scopeKey = scope();
      const bytes = encoder.encode("original");
      const saved = await files.save(input(scopeKey, bytes));
      bytes.fill(0x41);
      const read = await files.read({ scopeKey, fileId: saved.fileId });
      expect(await read.text()).toBe("original");
    });

    it("round-trips Unicode filenames and media type parameters", async () => {
      const scopeKey = scope();
      const names = [
        "Bericht für März 2024.csv",
        "報告 書.pdf",
        "emoji 🚀✨.txt",
        "quote \"and\" 'x'; semi.txt",
      ];
      for (const filename of names) {
        const saved = await files.save(
          input(scopeKey, encoder.encode(filename), { filename, mediaType: "text/plain; charset=utf-8" }),
        );
        expect(saved.filename).toBe(filename);
        const head = await files.head({ scopeKey, fileId: saved.fileId });
        expect(head.filename).toBe(filename);
        expect(head.mediaType).toBe("text/plain; charset=utf-8");
        const read = await files.read({ scopeKey, fileId: saved.fileId });
        expect(await read.text()).toBe(filename);
      }
    });

    it("treats filenames with path segments as data only", async () => {
      const scopeKey = scope();
      const hostile = ["../../escape.txt", "/etc/passwd", "..\\..\\win.ini", "a/b/../../../c.txt", "..", "."];
      const ids = new Set<string>();
      for (const filename of hostile) {
        const saved = await files.save(input(scopeKey, encoder.encode(`body of ${filename}`), { filename }));
        expect(saved.filename).toBe(filename);
        expect(saved.fileId).not.toContain("/");
        expect(saved.fileId).not.toContain("\\");
        expect(saved.fileId).not.toContain("..");
        ids.add(saved.fileId);
        const read = await files.read({ scopeKey, fileId: saved.fileId });
        expect(read.filename).toBe(filename);
        expect(await read.text()).toBe(`body of ${filename}`);
      }
      expect(ids.size).toBe(hostile.length);
    });

    it("gives each save a unique id not derived from the filename", async () => {
      const scopeKey = scope();
      const filename = "same-name-report.csv";
      const saved = await Promise.all(
        Array.from({ length: 10 }, (_, index) =>
          files.save(input(scopeKey, encoder.encode(`v${index}`), { filename })),
        ),
      );
      const ids = saved.map((file) => file.fileId);
      expect(new Set(ids).size).toBe(ids.length);
      for (const id of ids) {
        expect(id).not.toContain("same-name");
        expect(id).not.toContain("report");
      }
      for (const [index, file] of saved.entries()) {
        const read = await files.read({ scopeKey, fileId: file.fileId });
        expect(await read.text()).toBe(`v${index}`);
      }
    });

    it("hides files of another scope exactly like missing ones", async () => {
      const owner = scope();
      const other = scope();
      const saved = await files.save(input(owner, encoder.encode("secret")));

      const headOther = await expectNotFound(files.head({ scopeKey: other, fileId: saved.fileId }));
      const readOther = await expectNotFound(files.read({ scopeKey: other, fileId: saved.fileId }));
      const deleteOther = await expectNotFound(files.delete({ scopeKey: other, fileId: saved.fileId }));
      if (files.getDownloadUrl) {
        await expectNotFound(files.getDownloadUrl({ scopeKey: other, fileId: saved.fileId }));
      }

      // The other scope's delete did nothing.
      const read = await files.read({ scopeKey: owner, fileId: saved.fileId });
      expect(await read.text()).toBe("secret");

      // After a real delete, the owner sees the same errors the other scope saw.
      await files.delete({ scopeKey: owner, fileId: saved.fileId });
      const headMissing = await expectNotFound(files.head({ scopeKey: owner, fileId: saved.fileId }));
      const readMissing = await expectNotFound(files.read({ scopeKey: owner, fileId: saved.fileId }));
      const deleteMissing = await expectNotFound(files.delete({ scopeKey: owner, fileId: saved.fileId }));
      expect(headOther.message).toBe(headMissing.message);
      expect(readOther.message).toBe(readMissing.message);
      expect(deleteOther.message).toBe(deleteMissing.message);
      expect(headOther.details).toEqual(headMissing.details);
    });

    it("does not let a scope key that is a prefix of another see its files", async () => {
      const base = scope();
      const saved = await files.save(input(`${base}/child`, encoder.encode("child")));
      await expectNotFound(files.head({ scopeKey: base, fileId: saved.fileId }));
      await expectNotFound(files.head({ scopeKey: `${base}/`, fileId: saved.fileId }));
      const other = await files.save(input(base, encoder.encode("base")));
      await expectNotFound(files.read({ scopeKey: `${base}/child`, fileId: other.fileId }));
    });

    it("reports unknown and malformed ids as NOT_FOUND", async () => {
      const scopeKey = scope();
      await files.save(input(scopeKey, encoder.encode("present")));
      for (const fileId of [
        "file_00000000000000000000000000000000",
        "../../etc/passwd",
        "",
        "a/b",
        "%2e%2e",
      ]) {
        await expectNotFound(files.head({ scopeKey, fileId }));
        await expectNotFound(files.read({ scopeKey, fileId }));
        await expectNotFound(files.delete({ scopeKey, fileId }));
      }
    });

    it("deletes a file: head, read and a second delete are NOT_FOUND", async () => {
      const scopeKey = scope();
      const keep = await files.save(input(scopeKey, encoder.encode("keep")));
      const gone = await files.save(input(scopeKey, encoder.encode("gone")));
      await files.delete({ scopeKey, fileId: gone.fileId });
      await expectNotFound(files.head({ scopeKey, fileId: gone.fileId }));
      await expectNotFound(files.read({ scopeKey, fileId: gone.fileId }));
      await expectNotFound(files.delete({ scopeKey, fileId: gone.fileId }));
      const read = await files.read({ scopeKey, fileId: keep.fileId });
      expect(await read.text()).toBe("keep");
    });

    it("rejects invalid input with INVALID_INPUT", async () => {
      const scopeKey = scope();
      const body = encoder.encode("x");
      await expectInvalid(files.save(input("", body)));
      await expectInvalid(files.save(input(scopeKey, body, { filename: "" })));
      await expectInvalid(files.save(input(scopeKey, body, { mediaType: "not a media type" })));
      await expectInvalid(files.save(input(scopeKey, body, { size: -1 })));
      await expectInvalid(files.save(input(scopeKey, "text" as unknown as FileBody)));
      await expectInvalid(
        files.save(
          input(scopeKey, body, { metadata: { when: new Date() } as unknown as SaveFileInput["metadata"] }),
        ),
      );
      await expectInvalid(
        files.save(
          input(scopeKey, iterableOf(["text" as unknown as Uint8Array]), { filename: "bad-chunk.txt" }),
        ),
      );
    });

    it("rejects a body that does not match the declared size", async () => {
      const scopeKey = scope();
      await expectInvalid(files.save(input(scopeKey, encoder.encode("12345"), { size: 4 })));
      await expectInvalid(files.save(input(scopeKey, streamOf([encoder.encode("123")]), { size: 10 })));
      const ok = await files.save(input(scopeKey, iterableOf([encoder.encode("1234")]), { size: 4 }));
      expect(ok.size).toBe(4);
    });

    it(`streams a large body (${largeBodyBytes} bytes) in and out`, { timeout: 120_000 }, async () => {
      const scopeKey = scope();
      const chunkSize = 64 * 1024;
      const hash = createHash("sha256");
      async function* produce(): AsyncGenerator<Uint8Array> {
        for (let offset = 0; offset < largeBodyBytes; offset += chunkSize) {
          const chunk = patternChunk(offset, Math.min(chunkSize, largeBodyBytes - offset));
          hash.update(chunk);
          yield chunk;
        }
      }
      const saved = await files.save(
        input(scopeKey, produce(), { mediaType: "application/octet-stream", filename: "large.bin" }),
      );
      expect(saved.size).toBe(largeBodyBytes);
      const expected = hash.digest("hex");
      const read = await files.read({ scopeKey, fileId: saved.fileId });
      expect(read.size).toBe(largeBodyBytes);
      expect(await streamDigest(read.body)).toEqual({ size: largeBodyBytes, sha256: expected });
    });

    it("rejects a save whose signal is already aborted, with the signal's reason", async () => {
      const scopeKey = scope();
      const controller = new AbortController();
      const reason = new Error("stop before start");
      controller.abort(reason);
      const error = await caught(
        files.save(input(scopeKey, encoder.encode("x"), { signal: controller.signal })),
      );
      expect(error).toBe(reason);
    });

    it("rejects a save aborted while the body is stalled", async () => {
      const scopeKey = scope();
      const controller = new AbortController();
      const reason = new Error("stop midway");
      let cancelled = false;
      const stalled = new ReadableStream<Uint8Array>({
        start(streamController) {
          streamController.enqueue(encoder.encode("first chunk"));
        },
        cancel() {
          cancelled = true;
        },
      });
      const pending = files.save(input(scopeKey, stalled, { signal: controller.signal }));
      setTimeout(() => controller.abort(reason), 50);
      const error = await caught(pending);
      expect(error).toBe(reason);
      await new Promise((resolve) => setTimeout(resolve, 10));
      expect(cancelled).toBe(true);
    });

    it("rejects a read whose signal is already aborted", async () => {
      const scopeKey = scope();
      const saved = await files.save(input(scopeKey, encoder.encode("x")));
      const controller = new AbortController();
      const reason = new Error("stop read");
      controller.abort(reason);
      const error = await caught(files.read({ scopeKey, fileId: saved.fileId, signal: controller.signal }));
      expect(error).toBe(reason);
    });

    it("allows the body to be consumed only once", async () => {
      const scopeKey = scope();
      const saved = await files.save(input(scopeKey, encoder.encode("once")));
      const read = await files.read({ scopeKey, fileId: saved.fileId });
      expect(await read.text()).toBe("once");
      await expect(read.bytes()).rejects.toThrow();
    });
  });
}
