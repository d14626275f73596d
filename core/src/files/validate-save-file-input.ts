import { PaiError } from "../errors/pai-error.js";
import { type JsonObject, normalizeJson } from "../json/json-value.js";
import type { SaveFileInput } from "../ports/files.js";
import { isFileBody } from "./read-body.js";

/** The checked, normalized parts of a `SaveFileInput` every provider stores. */
export type ValidatedSaveFileInput = {
  scopeKey: string;
  userKey: string | null;
  threadId: string | null;
  filename: string;
  mediaType: string;
  metadata: JsonObject | null;
  size: number | undefined;
};

const MAX_FILENAME_LENGTH = 1024;
// type "/" subtype, then optional parameters; tokens per RFC 9110 without being pedantic about them.
const MEDIA_TYPE_PATTERN = /^[A-Za-z0-9!#$&^_.+-]+\/[A-Za-z0-9!#$&^_.+-]+(\s*;.*)?$/;

function invalid(field: string, message: string): PaiError {
  return new PaiError("INVALID_INPUT", `Invalid file ${field}: ${message}`, {
    issues: [{ message, path: [field] }],
  });
}

function optionalKey(value: unknown, field: string): string | null {
  if (value === undefined || value === null) return null;
  if (typeof value !== "string") throw invalid(field, "expected a string or null.");
  return value;
}

/**
 * Checks what a provider is about to store and returns it normalized. The filename is kept
 * only as metadata (any Unicode, including `/` and `..`); providers never build paths from it.
 */
export function validateSaveFileInput(input: SaveFileInput): ValidatedSaveFileInput {
  if (typeof input !== "object" || input === null) throw invalid("input", "expected an object.");
  const { scopeKey, filename, mediaType, metadata, size, body } = input;
  if (typeof scopeKey !== "string" || scopeKey.length === 0) {
    throw invalid("scopeKey", "expected a non-empty string from the trusted scope.");
  }
  if (typeof filename !== "string" || filename.length === 0 || filename.length > MAX_FILENAME_LENGTH) {
    throw invalid("filename", `expected a non-empty string of at most ${MAX_FILENAME_LENGTH} characters.`);
  }
  if (filename.includes("\u0000")) throw invalid("filename", "must not contain NUL characters.");
  if (typeof mediaType !== "string" || !MEDIA_TYPE_PATTERN.test(mediaType)) {
    throw invalid("mediaType", 'expected a media type such as "text/csv" or "application/octet-stream".');
  }
  if (size !== undefined && (!Number.isSafeInteger(size) || size < 0)) {
    throw invalid("size", "expected a non-negative integer byte count, or leave it out.");
  }
  if (!isFileBody(body)) {
    throw invalid(
      "body",
      "expected a Uint8Array, a ReadableStream of Uint8Array or an AsyncIterable of Uint8Array.",
    );
  }
  let normalized: JsonObject | null = null;
  if (metadata !== undefined && metadata !== null) {
    if (typeof metadata !== "object" || Array.isArray(metadata)) {
      throw invalid("metadata", "expected a plain JSON object.");
    }
    normalized = normalizeJson(metadata, "File metadata") as JsonObject;
  }
  return {
    scopeKey,
    userKey: optionalKey(input.userKey, "userKey"),
    threadId: optionalKey(input.threadId, "threadId"),
    filename,
    mediaType,
    metadata: normalized,
    size,
  };
}
