/**
 * File ids are opaque, random and never derived from the filename, so a hostile filename
 * cannot influence where a provider stores bytes. The strict shape (no dots, no slashes)
 * lets providers use an id directly as a path segment or object-key segment.
 */
export const FILE_ID_PATTERN = /^file_[0-9a-f]{32}$/;

/** A new random file id (`file_` + 128 random bits as hex). */
export function createFileId(): string {
  return `file_${globalThis.crypto.randomUUID().replaceAll("-", "")}`;
}

/** True when `value` has the shape of an id made by `createFileId`. */
export function isFileId(value: unknown): value is string {
  return typeof value === "string" && FILE_ID_PATTERN.test(value);
}
