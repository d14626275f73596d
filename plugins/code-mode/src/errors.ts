import { PaiError } from "@pai/core";

/** A misconfigured `codeModeTool` call. */
export function invalidCodeModeOption(message: string): PaiError {
  return new PaiError("INVALID_DEFINITION", `codeModeTool: ${message}`);
}
