import type { JsonObject } from "../json/json-value.js";

export type FileBody = Uint8Array | ReadableStream<Uint8Array> | AsyncIterable<Uint8Array>;

/** Input to a provider. `scopeKey`, `userKey` and `threadId` come from the runtime, never from tool input. */
export type SaveFileInput = {
  scopeKey: string;
  userKey: string | null;
  threadId: string | null;
  body: FileBody;
  mediaType: string;
  filename: string;
  metadata?: JsonObject;
  /** Known size in bytes, when the caller has it (lets providers pick multipart uploads). */
  size?: number;
  signal?: AbortSignal;
};

export type UploadedFile = {
  fileId: string;
  scopeKey: string;
  userKey: string | null;
  threadId: string | null;
  filename: string;
  mediaType: string;
  size: number;
  metadata: JsonObject | null;
  createdAt: string;
};

export type StoredFileBody = UploadedFile & {
  /** The bytes as a stream; can be read once. */
  body: ReadableStream<Uint8Array>;
  /** Reads the whole body into memory. */
  bytes(): Promise<Uint8Array>;
  text(): Promise<string>;
};

/**
 * Files port, version 1. Providers authorize by `scopeKey`: a file of another scope is
 * reported exactly like a missing one (`PaiError` NOT_FOUND).
 */
export interface FilesV1 {
  readonly specificationVersion: "v1";
  readonly name: string;
  save(input: SaveFileInput): Promise<UploadedFile>;
  head(input: { scopeKey: string; fileId: string }): Promise<UploadedFile>;
  read(input: { scopeKey: string; fileId: string; signal?: AbortSignal }): Promise<StoredFileBody>;
  delete(input: { scopeKey: string; fileId: string }): Promise<void>;
  /** Optional: a time-limited download URL (S3 presigned URLs). */
  getDownloadUrl?(input: { scopeKey: string; fileId: string; expiresInSeconds?: number }): Promise<string>;
  close?(): Promise<void>;
}

/** The scoped facade tools see as `ctx.files`. */
export type ScopedFiles = {
  save(input: Pick<SaveFileInput, "body" | "mediaType" | "filename" | "metadata">): Promise<UploadedFile>;
  read(input: { fileId: string }): Promise<StoredFileBody>;
};
