// Which ids a client may send; the service and the transports' schemas share the rule.

/**
 * The longest id a client may have stored (a message id): MySQL's id columns are varchar(191),
 * the most a four-column utf8mb4 key fits in InnoDB's index limit. Ids only looked up may be
 * longer: they are never written.
 */
export const MAX_STORED_ID_LENGTH = 191;

/** Longest id any call accepts. */
export const MAX_ID_LENGTH = 512;

// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it refuses.
const CONTROL_CHARACTER = /[\u0000-\u001f\u007f]/;

/**
 * Why an id is refused, or null. Ids are compared exactly, but MySQL's binary collation pads
 * with spaces (`"m1"` and `"m1 "` are one key there), so an id with whitespace at either end
 * could name another row; control characters have no place in an id either.
 */
export function idProblem(value: string): string | null {
  if (value.trim() !== value) return "must not start or end with whitespace.";
  if (CONTROL_CHARACTER.test(value)) return "must not hold control characters.";
  return null;
}
