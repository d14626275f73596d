import { createHash } from "node:crypto";
import { Readable } from "node:stream";
import {
  DeleteObjectCommand,
  GetObjectCommand,
  type GetObjectCommandOutput,
  PutObjectCommand,
  type S3Client,
} from "@aws-sdk/client-s3";
import { Upload } from "@aws-sdk/lib-storage";
import { getSignedUrl } from "@aws-sdk/s3-request-presigner";
import type { FilesV1, StoredFileBody, UploadedFile } from "@pai/core";
import { PaiError } from "@pai/core";
import {
  createFileId,
  createStoredFileBody,
  fileNotFoundError,
  isFileId,
  readFileBody,
  validateSaveFileInput,
} from "@pai/core/internal";

/**
 * The parts of an `S3Client` this adapter uses: `send` for commands, plus `config` and
 * `middlewareStack`, which `Upload` and `getSignedUrl` read. Pass a configured `S3Client`.
 */
export type S3FilesClient = Pick<S3Client, "send" | "config" | "middlewareStack">;

/** Options for `s3Files`. */
export type S3FilesOptions = {
  client: S3FilesClient;
  bucket: string;
  /** Key prefix for everything this provider writes, e.g. "pai/files". Leading and trailing slashes are ignored. */
  prefix?: string;
  /** Enables `getDownloadUrl` (presigned GET URLs). Leave it out when clients cannot reach the bucket. */
  presign?: { expiresInSeconds?: number };
  /** Multipart part size in bytes (minimum 5 MiB, the S3 limit). Default 5 MiB. */
  partSizeBytes?: number;
  /** Parts uploaded in parallel. Memory held per upload is about `queueSize * partSizeBytes`. Default 2. */
  queueSize?: number;
  /** Largest body accepted, in bytes; larger saves fail with PAYLOAD_TOO_LARGE. No limit unless given. */
  maxFileBytes?: number;
};

const MIN_PART_SIZE = 5 * 1024 * 1024;
const DEFAULT_EXPIRES_IN_SECONDS = 900;
// S3 rejects SigV4 presigned URLs valid for more than seven days.
const MAX_EXPIRES_IN_SECONDS = 7 * 24 * 60 * 60;
const SIDECAR_SUFFIX = ".json";

type Sidecar = UploadedFile & { version: 1 };

function abortReason(signal: AbortSignal): unknown {
  return signal.reason ?? new DOMException("The operation was aborted.", "AbortError");
}

function isNoSuchKey(error: unknown): boolean {
  const candidate = error as { name?: string; $metadata?: { httpStatusCode?: number } } | null;
  return (
    candidate?.name === "NoSuchKey" ||
    candidate?.name === "NotFound" ||
    candidate?.$metadata?.httpStatusCode === 404
  );
}

/** RFC 6266 Content-Disposition with an ASCII fallback and the exact UTF-8 name. */
function contentDisposition(filename: string): string {
  const fallback = filename.replace(/[^\x20-\x7e]|["\\]/g, "_");
  const encoded = encodeURIComponent(filename).replace(
    /['()*]/g,
    (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`,
  );
  return `attachment; filename="${fallback}"; filename*=UTF-8''${encoded}`;
}

/**
 * Files in an S3-compatible bucket (AWS S3, MinIO, R2, ...). Keys are
 * `<prefix>/<sha256(scopeKey)>/<fileId>` for the bytes and `<fileId>.json` for the record,
 * so nothing from user input reaches a key. Bodies stream through `Upload` (multipart once
 * they pass one part) and stream back from GetObject. The record is written after the
 * bytes and is what makes a file exist.
 */
export function s3Files(options: S3FilesOptions): FilesV1 {
  const { client, bucket } = options;
  if (!client || typeof client.send !== "function") {
    throw new PaiError("INVALID_DEFINITION", "s3Files needs `client`: an S3Client from @aws-sdk/client-s3.");
  }
  if (typeof bucket !== "string" || bucket.length < 3) {
    throw new PaiError("INVALID_DEFINITION", "s3Files needs `bucket`: the name of an existing bucket.");
  }
  const partSize = options.partSizeBytes ?? MIN_PART_SIZE;
  if (!Number.isSafeInteger(partSize) || partSize < MIN_PART_SIZE) {
    throw new PaiError(
      "INVALID_DEFINITION",
      `s3Files \`partSizeBytes\` must be an integer of at least ${MIN_PART_SIZE}.`,
    );
  }
  const queueSize = options.queueSize ?? 2;
  if (!Number.isSafeInteger(queueSize) || queueSize < 1) {
    throw new PaiError("INVALID_DEFINITION", "s3Files `queueSize` must be a positive integer.");
  }
  const prefix = (options.prefix ?? "").replace(/^\/+|\/+$/g, "");
  const sdkClient = client as S3Client;

  const keysFor = (scopeKey: string, fileId: string) => {
    if (typeof scopeKey !== "string" || !isFileId(fileId)) return null;
    const scopeHash = createHash("sha256").update(scopeKey, "utf8").digest("hex");
    const content = [prefix, scopeHash, fileId].filter((part) => part.length > 0).join("/");
    return { content, sidecar: content + SIDECAR_SUFFIX };
  };

  const readRecord = async (scopeKey: string, fileId: string, signal?: AbortSignal) => {
    const keys = keysFor(scopeKey, fileId);
    if (!keys) throw fileNotFoundError(fileId);
    let text: string;
    try {
      const response = await client.send(
        new GetObjectCommand({ Bucket: bucket, Key: keys.sidecar }),
        signal ? { abortSignal: signal } : {},
      );
      text = await response.Body!.transformToString("utf-8");
    } catch (error) {
      if (signal?.aborted) throw abortReason(signal);
      if (isNoSuchKey(error)) throw fileNotFoundError(fileId);
      throw error;
    }
    const { version: _version, ...file } = JSON.parse(text) as Sidecar;
    // The stored scope is the authority, whatever the key says.
    if (file.scopeKey !== scopeKey || file.fileId !== fileId) throw fileNotFoundError(fileId);
    return { file: file as UploadedFile, keys };
  };

  const files: FilesV1 = {
    specificationVersion: "v1",
    name: "s3",

    async save(input) {
      const valid = validateSaveFileInput(input);
      const { signal } = input;
      if (signal?.aborted) throw abortReason(signal);
      const fileId = createFileId();
      const keys = keysFor(valid.scopeKey, fileId)!;
      const reader = readFileBody(input.body, {
        signal,
        expectedSize: valid.size,
        maxBytes: options.maxFileBytes,
      });
      const controller = new AbortController();
      const onAbort = () => controller.abort(signal?.reason);
      signal?.addEventListener("abort", onAbort, { once: true });
      let contentWritten = false;
      const bodyStream = Readable.from(reader, { objectMode: false });
      try {
        const upload = new Upload({
          client: sdkClient,
          params: {
            Bucket: bucket,
            Key: keys.content,
            Body: bodyStream,
            ContentType: valid.mediaType,
          },
          partSize,
          queueSize,
          leavePartsOnError: false,
          abortController: controller,
        });
        await upload.done();
        contentWritten = true;
        const file: UploadedFile = {
          fileId,
          scopeKey: valid.scopeKey,
          userKey: valid.userKey,
          threadId: valid.threadId,
          filename: valid.filename,
          mediaType: valid.mediaType,
          size: reader.bytesRead,
          metadata: valid.metadata,
          createdAt: new Date().toISOString(),
        };
        const sidecar: Sidecar = { version: 1, ...file };
        await client.send(
          new PutObjectCommand({
            Bucket: bucket,
            Key: keys.sidecar,
            Body: JSON.stringify(sidecar),
            ContentType: "application/json",
          }),
          { abortSignal: controller.signal },
        );
        return file;
      } catch (error) {
        if (contentWritten) {
          await client.send(new DeleteObjectCommand({ Bucket: bucket, Key: keys.content })).catch(() => {});
        }
        if (signal?.aborted) throw abortReason(signal);
        // Upload may wrap what our body reader threw; surface the PAI error (size, chunk type, limit).
        const cause = PaiError.isInstance(error) ? error : findPaiError(error);
        throw cause ?? error;
      } finally {
        signal?.removeEventListener("abort", onAbort);
        // On failure the SDK may leave the body half read; destroying it cancels the caller's source.
        bodyStream.destroy();
      }
    },

    async head({ scopeKey, fileId }) {
      return (await readRecord(scopeKey, fileId)).file;
    },

    async read({ scopeKey, fileId, signal }): Promise<StoredFileBody> {
      if (signal?.aborted) throw abortReason(signal);
      const { file, keys } = await readRecord(scopeKey, fileId, signal);
      let response: GetObjectCommandOutput;
      try {
        response = await client.send(
          new GetObjectCommand({ Bucket: bucket, Key: keys.content }),
          signal ? { abortSignal: signal } : {},
        );
      } catch (error) {
        if (signal?.aborted) throw abortReason(signal);
        if (isNoSuchKey(error)) throw fileNotFoundError(fileId);
        throw error;
      }
      const body = response.Body!.transformToWebStream() as ReadableStream<Uint8Array>;
      return createStoredFileBody(file, body);
    },

    async delete({ scopeKey, fileId }) {
      const { keys } = await readRecord(scopeKey, fileId);
      // The record goes first: once it is gone the file is gone, even if the bytes linger.
      await client.send(new DeleteObjectCommand({ Bucket: bucket, Key: keys.sidecar }));
      await client.send(new DeleteObjectCommand({ Bucket: bucket, Key: keys.content }));
    },
  };

  const presign = options.presign;
  if (presign) {
    const defaultExpiry = presign.expiresInSeconds ?? DEFAULT_EXPIRES_IN_SECONDS;
    files.getDownloadUrl = async ({ scopeKey, fileId, expiresInSeconds = defaultExpiry }) => {
      if (
        !Number.isSafeInteger(expiresInSeconds) ||
        expiresInSeconds < 1 ||
        expiresInSeconds > MAX_EXPIRES_IN_SECONDS
      ) {
        throw new PaiError(
          "INVALID_INPUT",
          `expiresInSeconds must be a whole number between 1 and ${MAX_EXPIRES_IN_SECONDS} (seven days).`,
        );
      }
      // Checking the record first keeps scope rules: no URL for another scope's or a missing file.
      const { file, keys } = await readRecord(scopeKey, fileId);
      const command = new GetObjectCommand({
        Bucket: bucket,
        Key: keys.content,
        ResponseContentType: file.mediaType,
        ResponseContentDisposition: contentDisposition(file.filename),
      });
      return getSignedUrl(sdkClient, command, { expiresIn: expiresInSeconds });
    };
  }

  return files;
}

function findPaiError(error: unknown): PaiError | undefined {
  let current: unknown = error;
  for (let depth = 0; depth < 5 && current && typeof current === "object"; depth++) {
    if (PaiError.isInstance(current)) return current;
    current = (current as { cause?: unknown }).cause;
  }
  return undefined;
}
