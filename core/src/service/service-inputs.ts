import { PaiError } from "../errors/pai-error.js";
import { isBlankTextPart } from "../runtime/message-rows.js";
import { idProblem, MAX_ID_LENGTH, MAX_STORED_ID_LENGTH } from "./client-id.js";
import { fileUrlProblem } from "./file-url.js";
import { mediaTypeProblem } from "./media-type.js";

// The checks of what a client sends the service: every value is bounded before the runtime sees it.

const MAX_LIST_LIMIT = 200;

export function clampLimit(limit: number | undefined, fallback = 50): number {
  if (limit === undefined) return fallback;
  if (!Number.isInteger(limit) || limit < 1) {
    throw new PaiError("INVALID_INPUT", `limit must be a positive integer (got ${limit}).`);
  }
  return Math.min(limit, MAX_LIST_LIMIT);
}

/** Largest thread version a storage column holds (signed 32-bit). */
export const MAX_THREAD_VERSION = 2_147_483_647;
const MAX_TEXT = 100_000;

export function optionalText(value: unknown, name: string): string | null {
  if (value === undefined || value === null) return null;
  if (typeof value !== "string" || value.length > MAX_TEXT) {
    throw new PaiError("INVALID_INPUT", `${name} must be a string of at most ${MAX_TEXT} characters.`);
  }
  return value;
}

export function versionOf(value: unknown): number {
  if (value === undefined) return 0;
  if (typeof value !== "number" || !Number.isInteger(value) || value < 0 || value > MAX_THREAD_VERSION) {
    throw new PaiError(
      "INVALID_INPUT",
      `afterVersion must be an integer from 0 to ${MAX_THREAD_VERSION} (got ${String(value).slice(0, 40)}).`,
    );
  }
  return value;
}

export function cursorOf(value: unknown): string | null {
  if (value === undefined || value === null) return null;
  if (typeof value !== "string" || value.length > 4096) {
    throw new PaiError("INVALID_INPUT", "cursor must be the nextCursor string of the previous page.");
  }
  return value;
}

/** A user message as the client sent it: text, or native text/file parts, bounded. */
export function checkMessage(message: unknown): void {
  if (!message || typeof message !== "object" || Array.isArray(message)) {
    throw new PaiError("INVALID_INPUT", "message must be { text } or { parts }.");
  }
  const record = message as Record<string, unknown>;
  if (record.id !== undefined) requireId(record.id, "message.id", MAX_STORED_ID_LENGTH);
  if ("text" in record) {
    if (typeof record.text !== "string" || record.text.trim().length === 0 || record.text.length > MAX_TEXT) {
      throw new PaiError(
        "INVALID_INPUT",
        `message.text must be a non-empty string of at most ${MAX_TEXT} characters.`,
      );
    }
    return;
  }
  const parts = record.parts;
  if (!Array.isArray(parts) || parts.length === 0 || parts.length > 64) {
    throw new PaiError("INVALID_INPUT", "message.parts must be an array of 1 to 64 text or file parts.");
  }
  parts.forEach((part: Record<string, unknown> | null, index) => {
    const at = `message.parts[${index}]`;
    if (part?.type === "text" && typeof part.text === "string" && part.text.length <= MAX_TEXT) return;
    if (
      part?.type === "file" &&
      typeof part.mediaType === "string" &&
      mediaTypeProblem(part.mediaType) === null &&
      typeof part.url === "string" &&
      part.url.length <= MAX_TEXT &&
      (part.filename === undefined || (typeof part.filename === "string" && part.filename.length <= 1024))
    ) {
      const problem = fileUrlProblem(part.url);
      if (problem === null) return;
      throw new PaiError("INVALID_INPUT", `${at}.url ${problem}`, {
        issues: [{ path: ["message", "parts", index, "url"], message: `${at}.url ${problem}` }],
      });
    }
    throw new PaiError(
      "INVALID_INPUT",
      `${at} must be { type: "text", text } or { type: "file", mediaType, url, filename? } with bounded strings.`,
    );
  });
  // Blank text parts are dropped when the message is stored (some providers refuse an empty text
  // block, and a stored one would fail every later run of the thread): something must remain.
  if (parts.every(isBlankTextPart)) {
    throw new PaiError(
      "INVALID_INPUT",
      "message.parts holds no content: send at least one file part or a text part with text.",
    );
  }
}

export function failureOf(error: unknown): string | { message: string } {
  const message = typeof error === "string" ? error : (error as { message?: unknown } | null)?.message;
  if (typeof message !== "string" || message.length > MAX_TEXT) {
    throw new PaiError(
      "INVALID_INPUT",
      `error must be a string or { message } of at most ${MAX_TEXT} characters.`,
    );
  }
  return typeof error === "string" ? error : { message };
}

export function requireMediaType(value: unknown): string {
  const problem = typeof value === "string" ? mediaTypeProblem(value) : "must be a string.";
  if (problem) throw new PaiError("INVALID_INPUT", `mediaType ${problem}`);
  return value as string;
}

/** An id a client sends: bounded, and exact (see `idProblem`). */
export function requireId(value: unknown, name: string, maxLength = MAX_ID_LENGTH): string {
  if (typeof value !== "string" || value.length === 0 || value.length > maxLength) {
    throw new PaiError(
      "INVALID_INPUT",
      `${name} must be a non-empty string of at most ${maxLength} characters.`,
    );
  }
  const problem = idProblem(value);
  if (problem) {
    throw new PaiError("INVALID_INPUT", `${name} ${problem}`, {
      issues: [{ path: [name], message: problem }],
    });
  }
  return value;
}

export function requireString(value: unknown, name: string): string {
  if (typeof value !== "string" || value.length === 0 || value.length > 512) {
    throw new PaiError("INVALID_INPUT", `${name} must be a non-empty string of at most 512 characters.`);
  }
  return value;
}
