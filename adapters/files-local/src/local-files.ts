import { createHash, randomUUID } from "node:crypto";
import { createReadStream, createWriteStream } from "node:fs";
import { mkdir, open, readFile, rename, rm, writeFile } from "node:fs/promises";
import { join, resolve, sep } from "node:path";
import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import type { FilesV1, JsonObject, StoredFileBody, UploadedFile } from "@pai/core";
import { PaiError } from "@pai/core";
import {
  createFileId,
  createStoredFileBody,
  fileNotFoundError,
  isFileId,
  readFileBody,
  validateSaveFileInput,
} from "@pai/core/internal";

/** Options for `localFiles`. */
export type LocalFilesOptions = {
  /** Root directory; created on first save. Everything the provider writes stays below it. */
  directory: string;
  /** Largest body accepted, in bytes; larger saves fail with PAYLOAD_TOO_LARGE. No limit unless given. */
  maxFileBytes?: number;
};

const SIDECAR_SUFFIX = ".json";

type Sidecar = UploadedFile & { version: 1 };

function isMissing(error: unknown): boolean {
  return (error as NodeJS.ErrnoException | null)?.code === "ENOENT";
}

function abortReason(signal: AbortSignal): unknown {
  return signal.reason ?? new DOMException("The operation was aborted.", "AbortError");
}

/** The scope's directory name: a hash, so no scope key can form a path or collide with another's prefix. */
function scopeSegment(scopeKey: string): string {
  return createHash("sha256").update(scopeKey, "utf8").digest("hex");
}

/**
 * Files on local disk, for single-node deployments and the playground. Layout:
 * `<directory>/<sha256(scopeKey)>/<fileId>` holds the bytes and `<fileId>.json` the record.
 * Writes go to a temp file in the same directory and are renamed into place, so a reader
 * never sees a partial file; the record is written last and is what makes a file exist.
 */
export function localFiles(options: LocalFilesOptions): FilesV1 {
  if (typeof options?.directory !== "string" || options.directory.length === 0) {
    throw new PaiError("INVALID_DEFINITION", "localFiles needs a `directory` to store files in.");
  }
  const root = resolve(options.directory);

  /** Paths for a file, or null when the id cannot name one of our files (then it is NOT_FOUND). */
  const locate = (scopeKey: string, fileId: string) => {
    if (typeof scopeKey !== "string" || !isFileId(fileId)) return null;
    const dir = join(root, scopeSegment(scopeKey));
    const content = join(dir, fileId);
    // Defense in depth: the id pattern already rules out separators and dots.
    if (!content.startsWith(root + sep)) return null;
    return { dir, content, sidecar: content + SIDECAR_SUFFIX };
  };

  const readRecord = async (scopeKey: string, fileId: string) => {
    const paths = locate(scopeKey, fileId);
    if (!paths) throw fileNotFoundError(fileId);
    let text: string;
    try {
      text = await readFile(paths.sidecar, "utf8");
    } catch (error) {
      if (isMissing(error)) throw fileNotFoundError(fileId);
      throw error;
    }
    const { version: _version, ...file } = JSON.parse(text) as Sidecar;
    // A hash collision is not realistic, but the stored scope is the authority.
    if (file.scopeKey !== scopeKey || file.fileId !== fileId) throw fileNotFoundError(fileId);
    return { file: file as UploadedFile, paths };
  };

  return {
    specificationVersion: "v1",
    name: "local",

    async save(input) {
      const valid = validateSaveFileInput(input);
      const { signal } = input;
      if (signal?.aborted) throw abortReason(signal);
      const fileId = createFileId();
      const paths = locate(valid.scopeKey, fileId)!;
      await mkdir(paths.dir, { recursive: true });
      // Temp names start with "." so they can never match the file id pattern.
      const tempContent = join(paths.dir, `.tmp-${randomUUID()}`);
      const tempSidecar = join(paths.dir, `.tmp-${randomUUID()}${SIDECAR_SUFFIX}`);
      const reader = readFileBody(input.body, {
        signal,
        expectedSize: valid.size,
        maxBytes: options.maxFileBytes,
      });
      try {
        await pipeline(
          Readable.from(reader, { objectMode: false }),
          createWriteStream(tempContent, { flags: "wx", mode: 0o600 }),
          signal ? { signal } : {},
        );
        const file: UploadedFile = {
          fileId,
          scopeKey: valid.scopeKey,
          userKey: valid.userKey,
          threadId: valid.threadId,
          filename: valid.filename,
          mediaType: valid.mediaType,
          size: reader.bytesRead,
          metadata: valid.metadata as JsonObject | null,
          createdAt: new Date().toISOString(),
        };
        const sidecar: Sidecar = { version: 1, ...file };
        await writeFile(tempSidecar, JSON.stringify(sidecar), { flag: "wx", mode: 0o600 });
        if (signal?.aborted) throw abortReason(signal);
        await rename(tempContent, paths.content);
        await rename(tempSidecar, paths.sidecar);
        return file;
      } catch (error) {
        await Promise.all([rm(tempContent, { force: true }), rm(tempSidecar, { force: true })]);
        await rm(paths.content, { force: true });
        // pipeline wraps an abort in its own AbortError; callers expect the signal's reason.
        if (signal?.aborted) throw abortReason(signal);
        throw error;
      }
    },

    async head({ scopeKey, fileId }) {
      return (await readRecord(scopeKey, fileId)).file;
    },

    async read({ scopeKey, fileId, signal }): Promise<StoredFileBody> {
      if (signal?.aborted) throw abortReason(signal);
      const { file, paths } = await readRecord(scopeKey, fileId);
      let handle: Awaited<ReturnType<typeof open>>;
      try {
        // Open before returning so a concurrent delete either wins (NOT_FOUND) or loses cleanly.
        handle = await open(paths.content, "r");
      } catch (error) {
        if (isMissing(error)) throw fileNotFoundError(fileId);
        throw error;
      }
      const stream = createReadStream("", { fd: handle, autoClose: true, ...(signal ? { signal } : {}) });
      const body = Readable.toWeb(stream) as unknown as ReadableStream<Uint8Array>;
      return createStoredFileBody(file, body);
    },

    async delete({ scopeKey, fileId }) {
      const { paths } = await readRecord(scopeKey, fileId);
      try {
        await rm(paths.sidecar);
      } catch (error) {
        if (isMissing(error)) throw fileNotFoundError(fileId);
        throw error;
      }
      await rm(paths.content, { force: true });
    },
  };
}
