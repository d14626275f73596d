import { PaiError } from "../errors/pai-error.js";
import type { StoredFileBody, UploadedFile } from "../ports/files.js";

/**
 * Wraps a file record and its byte stream as a `StoredFileBody`. `bytes()` and `text()`
 * consume `body`, so only one of the three can be used.
 */
export function createStoredFileBody(file: UploadedFile, body: ReadableStream<Uint8Array>): StoredFileBody {
  let consumed = false;
  const bytes = async (): Promise<Uint8Array> => {
    if (consumed || body.locked) {
      throw new PaiError(
        "CONFLICT",
        `The body of file "${file.fileId}" was already read. Call files.read again to read it a second time.`,
      );
    }
    consumed = true;
    const parts: Uint8Array[] = [];
    let total = 0;
    for await (const chunk of body as unknown as AsyncIterable<Uint8Array>) {
      parts.push(chunk);
      total += chunk.byteLength;
    }
    const result = new Uint8Array(total);
    let offset = 0;
    for (const part of parts) {
      result.set(part, offset);
      offset += part.byteLength;
    }
    return result;
  };
  return {
    ...file,
    body,
    bytes,
    text: async () => new TextDecoder().decode(await bytes()),
  };
}
