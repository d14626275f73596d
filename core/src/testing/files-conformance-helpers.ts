import { createHash } from "node:crypto";
import { expect } from "vitest";
import { PaiError } from "../errors/pai-error.js";
import type { FileBody, SaveFileInput, UploadedFile } from "../ports/files.js";

// Inputs and checks the FilesV1 conformance suite shares between its tests.

export const encoder = new TextEncoder();

export function scope(): string {
  return `scope-${globalThis.crypto.randomUUID()}`;
}

export function input(scopeKey: string, body: FileBody, extra: Partial<SaveFileInput> = {}): SaveFileInput {
  return {
    scopeKey,
    userKey: "user-1",
    threadId: "thread-1",
    body,
    mediaType: "text/plain",
    filename: "notes.txt",
    ...extra,
  };
}

export function streamOf(chunks: Uint8Array[]): ReadableStream<Uint8Array> {
  let index = 0;
  return new ReadableStream<Uint8Array>({
    pull(controller) {
      if (index < chunks.length) controller.enqueue(chunks[index++]);
      else controller.close();
    },
  });
}

export async function* iterableOf(chunks: Uint8Array[]): AsyncGenerator<Uint8Array> {
  for (const chunk of chunks) {
    await Promise.resolve();
    yield chunk;
  }
}

/** A deterministic byte pattern that differs per offset, so reordered or dropped chunks show up. */
export function patternChunk(offset: number, length: number): Uint8Array {
  const chunk = new Uint8Array(length);
  for (let i = 0; i < length; i++) {
    const position = offset + i;
    chunk[i] = (position * 31 + (position >>> 8) * 7 + (position >>> 16)) & 0xff;
  }
  return chunk;
}

export async function caught(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error("Expected the promise to reject, but it resolved.");
}

export async function expectNotFound(promise: Promise<unknown>): Promise<PaiError> {
  const error = await caught(promise);
  expect(PaiError.isInstance(error), `expected a PaiError, got ${String(error)}`).toBe(true);
  expect((error as PaiError).code).toBe("NOT_FOUND");
  return error as PaiError;
}

export async function expectInvalid(promise: Promise<unknown>): Promise<void> {
  const error = await caught(promise);
  expect(PaiError.isInstance(error), `expected a PaiError, got ${String(error)}`).toBe(true);
  expect((error as PaiError).code).toBe("INVALID_INPUT");
}

export function expectRecord(file: UploadedFile, expected: Omit<UploadedFile, "fileId" | "createdAt">): void {
  expect(file).toEqual({ ...expected, fileId: file.fileId, createdAt: file.createdAt });
  expect(typeof file.fileId).toBe("string");
  expect(file.fileId.length).toBeGreaterThan(0);
  expect(new Date(file.createdAt).toISOString()).toBe(file.createdAt);
}

export async function streamDigest(
  stream: ReadableStream<Uint8Array>,
): Promise<{ size: number; sha256: string }> {
  const hash = createHash("sha256");
  let size = 0;
  for await (const chunk of stream as unknown as AsyncIterable<Uint8Array>) {
    hash.update(chunk);
    size += chunk.byteLength;
  }
  return { size, sha256: hash.digest("hex") };
}
