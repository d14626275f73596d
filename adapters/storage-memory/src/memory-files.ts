import type { FilesV1, StoredFileBody, UploadedFile } from "@pai/core";
import {
  collectFileBody,
  createFileId,
  createStoredFileBody,
  fileNotFoundError,
  validateSaveFileInput,
} from "@pai/core/internal";

/** Options for `memoryFiles`. */
export type MemoryFilesOptions = {
  /** Clock for `createdAt`; defaults to the system clock. */
  now?: () => Date;
  /** Largest body accepted, in bytes; larger saves fail with PAYLOAD_TOO_LARGE. No limit unless given. */
  maxFileBytes?: number;
};

type Entry = { file: UploadedFile; bytes: Uint8Array };

function abortReason(signal: AbortSignal): unknown {
  return signal.reason ?? new DOMException("The operation was aborted.", "AbortError");
}

/**
 * Files kept in process memory: for tests and prototypes. Bodies are copied on save and on
 * read, so neither the caller's buffer nor a reader can change what is stored.
 */
export function memoryFiles(options: MemoryFilesOptions = {}): FilesV1 {
  const now = options.now ?? (() => new Date());
  const entries = new Map<string, Entry>();

  const find = (scopeKey: string, fileId: string): Entry => {
    const entry = typeof fileId === "string" ? entries.get(fileId) : undefined;
    // Another scope's file is reported exactly like a missing one.
    if (!entry || entry.file.scopeKey !== scopeKey) throw fileNotFoundError(fileId);
    return entry;
  };

  return {
    specificationVersion: "v1",
    name: "memory",

    async save(input) {
      const valid = validateSaveFileInput(input);
      const bytes = await collectFileBody(input.body, {
        signal: input.signal,
        expectedSize: valid.size,
        maxBytes: options.maxFileBytes,
      });
      if (input.signal?.aborted) throw abortReason(input.signal);
      const file: UploadedFile = {
        fileId: createFileId(),
        scopeKey: valid.scopeKey,
        userKey: valid.userKey,
        threadId: valid.threadId,
        filename: valid.filename,
        mediaType: valid.mediaType,
        size: bytes.byteLength,
        metadata: valid.metadata,
        createdAt: now().toISOString(),
      };
      entries.set(file.fileId, { file, bytes });
      return structuredClone(file);
    },

    async head({ scopeKey, fileId }) {
      return structuredClone(find(scopeKey, fileId).file);
    },

    async read({ scopeKey, fileId, signal }): Promise<StoredFileBody> {
      if (signal?.aborted) throw abortReason(signal);
      const { file, bytes } = find(scopeKey, fileId);
      const copy = bytes.slice();
      const body = new ReadableStream<Uint8Array>({
        start(controller) {
          if (copy.byteLength > 0) controller.enqueue(copy);
          controller.close();
        },
      });
      return createStoredFileBody(structuredClone(file), body);
    },

    async delete({ scopeKey, fileId }) {
      find(scopeKey, fileId);
      entries.delete(fileId);
    },

    async close() {
      entries.clear();
    },
  };
}
