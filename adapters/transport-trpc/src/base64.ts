/**
 * Base64 for file bodies inside JSON, without Node's Buffer so the client bundle stays
 * browser-safe. Chunked to keep `String.fromCharCode` argument lists small.
 */

const CHUNK = 0x8000;

export function bytesToBase64(bytes: Uint8Array): string {
  let binary = "";
  for (let offset = 0; offset < bytes.length; offset += CHUNK) {
    binary += String.fromCharCode(...bytes.subarray(offset, offset + CHUNK));
  }
  return btoa(binary);
}

export function base64ToBytes(base64: string): Uint8Array {
  const binary = atob(base64);
  const bytes = new Uint8Array(binary.length);
  for (let index = 0; index < binary.length; index++) bytes[index] = binary.charCodeAt(index);
  return bytes;
}

/**
 * Standard base64, padded or not: whole 4-character groups, then at most one short group of 2
 * characters (padded with "==" or not) or 3 (padded with "=" or not). Padding anywhere else, or a
 * lone trailing character, is not base64 (`atob` would throw after the schema let it through).
 */
export const BASE64_PATTERN = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}(?:==)?|[A-Za-z0-9+/]{3}=?)?$/;

/** The number of bytes a base64 string decodes to. */
export function decodedLength(base64: string): number {
  const padding = base64.endsWith("==") ? 2 : base64.endsWith("=") ? 1 : 0;
  return Math.floor((base64.length * 3) / 4) - padding;
}
