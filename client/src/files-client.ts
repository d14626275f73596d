import { type JsonObject, PaiError } from "@pai/core";
import type { ClientUploadedFile } from "@pai/core/protocol";
import type { FileDownload, PaiTransport } from "./transport.js";

// Browser-safe: only Blob, Uint8Array and fetch; no Node APIs.

/** What `client.files.upload` sends. */
export type UploadFileInput = {
  /** The bytes: a `Blob`/`File` (e.g. from an `<input type="file">`) or a `Uint8Array`. */
  file: Blob | Uint8Array;
  /** Stored name. Default: the `File`'s own name; required for a `Blob` or bytes. */
  filename?: string;
  /** Default: the `Blob`'s `type`, else `application/octet-stream`. */
  mediaType?: string;
  /** Attach the file to one of the caller's threads. */
  threadId?: string | null;
  metadata?: JsonObject;
};

/** A downloaded file: its record and all of its bytes. */
export type DownloadedFile = {
  file: ClientUploadedFile;
  bytes: Uint8Array;
};

export type DownloadFileOptions = {
  /** Ask the server for the bytes inline even when it could hand out a download URL. */
  inline?: boolean;
  signal?: AbortSignal;
};

/** The `files` part of a PAI client. */
export type PaiFilesClient = {
  /** Uploads a file into the caller's scope and returns its record (use its `fileId`). */
  upload(input: UploadFileInput): Promise<ClientUploadedFile>;
  /**
   * Downloads a file of the caller's scope: the bytes inline, or by fetching the time-limited
   * URL the server returns when its file provider presigns. A file of another scope is
   * NOT_FOUND, exactly like a missing one.
   */
  download(fileId: string, options?: DownloadFileOptions): Promise<DownloadedFile>;
  /** The transport's raw answer: metadata plus the bytes or a download URL (not followed). */
  get(input: { fileId: string; inline?: boolean }): Promise<FileDownload>;
};

export type FilesClientOptions = {
  /** Used to follow download URLs. Default: the global `fetch`. */
  fetch?: typeof fetch;
};

function isFile(value: Blob): value is File {
  return typeof (value as Partial<File>).name === "string";
}

async function toBytes(file: Blob | Uint8Array): Promise<Uint8Array> {
  if (file instanceof Uint8Array) return file;
  if (typeof Blob !== "undefined" && file instanceof Blob) return new Uint8Array(await file.arrayBuffer());
  throw new PaiError("INVALID_INPUT", "files.upload needs `file` as a Blob, File or Uint8Array.");
}

async function fetchDownloadUrl(
  fetchImpl: typeof fetch,
  url: string,
  file: ClientUploadedFile,
  signal: AbortSignal | undefined,
): Promise<Uint8Array> {
  let response: Response;
  try {
    response = await fetchImpl(url, signal ? { signal } : {});
  } catch (error) {
    if (signal?.aborted) throw error;
    throw new PaiError(
      "INTERNAL",
      `Downloading file ${file.fileId} from its download URL failed: ${(error as Error)?.message ?? String(error)}. Check that this client can reach the file storage, or download with { inline: true }.`,
      { cause: error },
    );
  }
  if (!response.ok) {
    await response.body?.cancel();
    const code = response.status === 404 ? "NOT_FOUND" : response.status === 403 ? "FORBIDDEN" : "INTERNAL";
    throw new PaiError(
      code,
      `The download URL of file ${file.fileId} answered HTTP ${response.status}. URLs expire; call download again for a fresh one.`,
    );
  }
  return new Uint8Array(await response.arrayBuffer());
}

/** The `files` helpers of `createPaiClient`, over any `PaiTransport`. */
export function createFilesClient(transport: PaiTransport, options: FilesClientOptions = {}): PaiFilesClient {
  return {
    async upload({ file, filename, mediaType, threadId, metadata }) {
      const name = filename ?? (!(file instanceof Uint8Array) && isFile(file) ? file.name : undefined);
      if (!name) {
        throw new PaiError(
          "INVALID_INPUT",
          "files.upload needs a filename when `file` is a Blob or bytes: pass { filename }.",
        );
      }
      const type =
        mediaType ??
        (!(file instanceof Uint8Array) && file.type ? file.type : undefined) ??
        "application/octet-stream";
      return transport.files.upload({
        filename: name,
        mediaType: type,
        body: await toBytes(file),
        ...(threadId === undefined ? {} : { threadId }),
        ...(metadata === undefined ? {} : { metadata }),
      });
    },
    async download(fileId, { inline, signal } = {}) {
      const result = await transport.files.get(inline ? { fileId, inline } : { fileId });
      if (result.body) return { file: result.file, bytes: result.body };
      const fetchImpl = options.fetch ?? globalThis.fetch;
      const bytes = await fetchDownloadUrl(fetchImpl, result.downloadUrl, result.file, signal);
      return { file: result.file, bytes };
    },
    get: (input) => transport.files.get(input),
  };
}
