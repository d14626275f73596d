/** A deliberate, model-visible failure a tool chose: one sentence, nothing else. */
export type ToolFailure = string;

/** The record a client and the model receive for a `ToolFailure`. */
export type ToolFailureDetails = { code: "tool_failed"; message: string };

/**
 * Normalizes a failure into the record the runtime, the harness and `runTool` all use,
 * so an app rendering or logging failures agrees with them.
 */
export function toolFailureDetails(failure: ToolFailure): ToolFailureDetails {
  // The sentence reaches the model verbatim; only a blank one (which says nothing, and which
  // some providers refuse as an empty block) becomes the default.
  const message = typeof failure === "string" ? failure : "";
  return { code: "tool_failed", message: message.trim().length > 0 ? message : "The tool failed." };
}
