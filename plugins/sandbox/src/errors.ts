import { PaiError } from "@pai/core";

/** A sandbox file the tool asked for does not exist. */
export function sandboxFileNotFound(path: string, cause: unknown): PaiError {
  return new PaiError(
    "NOT_FOUND",
    `The sandbox has no file ${path}. List the directory with runCommand({ command: "ls" }) first.`,
    { cause },
  );
}

/** Misconfigured sandbox limits. */
export function invalidSandboxOption(message: string): PaiError {
  return new PaiError("INVALID_DEFINITION", `sandboxPlugin: ${message}`);
}
