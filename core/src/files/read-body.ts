import { PaiError } from "../errors/pai-error.js";
import type { FileBody } from "../ports/files.js";

/** True for the body shapes `FilesV1.save` accepts. */
export function isFileBody(value: unknown): value is FileBody {
  if (value instanceof Uint8Array) return true;
  if (typeof value !== "object" || value === null) return false;
  return (
    typeof (value as ReadableStream).getReader === "function" ||
    typeof (value as AsyncIterable<unknown>)[Symbol.asyncIterator] === "function"
  );
}

export type FileBodyReaderOptions = {
  signal?: AbortSignal;
  /** Declared size; reading fails with INVALID_INPUT as soon as the body disagrees with it. */
  expectedSize?: number;
  /** Hard cap; reading fails with PAYLOAD_TOO_LARGE once the body passes it. */
  maxBytes?: number;
};

/** Chunks of a body plus the running byte count, readable once. */
export type FileBodyReader = AsyncIterable<Uint8Array> & {
  /** Bytes read so far; the full size once iteration has finished. */
  readonly bytesRead: number;
};

function abortReason(signal: AbortSignal): unknown {
  return signal.reason ?? new DOMException("The operation was aborted.", "AbortError");
}

/** Races `promise` against the signal so a stalled body cannot outlive an abort. */
function raceAbort<T>(promise: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (!signal) return promise;
  if (signal.aborted) return Promise.reject(abortReason(signal));
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(abortReason(signal));
    signal.addEventListener("abort", onAbort, { once: true });
    promise.then(
      (value) => {
        signal.removeEventListener("abort", onAbort);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener("abort", onAbort);
        reject(error);
      },
    );
  });
}

async function* rawChunks(body: FileBody, signal: AbortSignal | undefined): AsyncGenerator<unknown> {
  if (body instanceof Uint8Array) {
    if (signal?.aborted) throw abortReason(signal);
    yield body;
    return;
  }
  if (typeof (body as ReadableStream<Uint8Array>).getReader === "function") {
    const reader = (body as ReadableStream<Uint8Array>).getReader();
    let done = false;
    try {
      while (true) {
        const result = await raceAbort(reader.read(), signal);
        if (result.done) {
          done = true;
          return;
        }
        yield result.value;
      }
    } finally {
      // Stop the producer when we leave early (abort, size error, consumer gave up).
      if (!done) reader.cancel().catch(() => {});
      reader.releaseLock();
    }
  }
  const iterator = (body as AsyncIterable<Uint8Array>)[Symbol.asyncIterator]();
  let done = false;
  try {
    while (true) {
      const result = await raceAbort(iterator.next(), signal);
      if (result.done) {
        done = true;
        return;
      }
      yield result.value;
    }
  } finally {
    if (!done) Promise.resolve(iterator.return?.()).catch(() => {});
  }
}

/**
 * Reads a `FileBody` (bytes, web stream or async iterable) as `Uint8Array` chunks, counting
 * bytes, checking the declared size and honouring the abort signal even while the producer
 * is stalled. Aborting rejects with `signal.reason`.
 */
export function readFileBody(body: FileBody, options: FileBodyReaderOptions = {}): FileBodyReader {
  const { signal, expectedSize, maxBytes } = options;
  let bytesRead = 0;
  let started = false;
  async function* chunks(): AsyncGenerator<Uint8Array> {
    if (started) throw new PaiError("INVALID_INPUT", "A file body can be read only once.");
    started = true;
    for await (const chunk of rawChunks(body, signal)) {
      if (!(chunk instanceof Uint8Array)) {
        throw new PaiError(
          "INVALID_INPUT",
          "A file body stream yielded a chunk that is not a Uint8Array. Encode text with TextEncoder before saving.",
        );
      }
      bytesRead += chunk.byteLength;
      if (expectedSize !== undefined && bytesRead > expectedSize) throw sizeMismatch(expectedSize, bytesRead);
      if (maxBytes !== undefined && bytesRead > maxBytes) {
        throw new PaiError(
          "PAYLOAD_TOO_LARGE",
          `The file body is larger than the limit of ${maxBytes} bytes.`,
        );
      }
      if (chunk.byteLength > 0) yield chunk;
    }
    if (expectedSize !== undefined && bytesRead !== expectedSize) throw sizeMismatch(expectedSize, bytesRead);
  }
  return {
    [Symbol.asyncIterator]: () => chunks(),
    get bytesRead() {
      return bytesRead;
    },
  };
}

function sizeMismatch(expected: number, actual: number): PaiError {
  return new PaiError(
    "INVALID_INPUT",
    `The file body does not match the declared size: expected ${expected} bytes, got ${actual > expected ? "more" : actual}. Pass the exact size or leave it out.`,
  );
}

/** Reads a whole body into one `Uint8Array` (a copy; the caller's buffer is never kept). */
export async function collectFileBody(
  body: FileBody,
  options: FileBodyReaderOptions = {},
): Promise<Uint8Array> {
  const parts: Uint8Array[] = [];
  const reader = readFileBody(body, options);
  for await (const chunk of reader) parts.push(chunk);
  const result = new Uint8Array(reader.bytesRead);
  let offset = 0;
  for (const part of parts) {
    result.set(part, offset);
    offset += part.byteLength;
  }
  return result;
}

/** A web `ReadableStream` over any `FileBody`; pulls lazily, cancels the source on cancel. */
export function fileBodyToStream(
  body: FileBody,
  options: FileBodyReaderOptions = {},
): ReadableStream<Uint8Array> {
  if (
    typeof (body as ReadableStream<Uint8Array>).getReader === "function" &&
    Object.keys(options).length === 0
  ) {
    return body as ReadableStream<Uint8Array>;
  }
  const iterator = readFileBody(body, options)[Symbol.asyncIterator]();
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      const result = await iterator.next();
      if (result.done) controller.close();
      else controller.enqueue(result.value);
    },
    async cancel() {
      await iterator.return?.(undefined);
    },
  });
}
