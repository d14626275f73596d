import { PaiError } from "../errors/pai-error.js";

/**
 * The one error for a file that cannot be returned. Missing, deleted, malformed and
 * other-scope ids all get this same error, so a caller cannot probe other scopes.
 */
export function fileNotFoundError(fileId: unknown): PaiError {
  const shown = typeof fileId === "string" ? JSON.stringify(fileId.slice(0, 80)) : "(not a string)";
  return new PaiError(
    "NOT_FOUND",
    `File ${shown} was not found. Check the fileId: files are visible only in the scope that saved them, and deleted files are gone.`,
  );
}
