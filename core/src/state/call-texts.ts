// The model-visible texts of calls that ended without a result of their own: the model reads
// them as the tool's error, and clients recognise cancellations by them (`part.cancelled`).

/** The error text of a call abandoned with no reason given, e.g. by a graceful shutdown. */
export const ABANDONED_TEXT = "Cancelled: the call was abandoned before it produced a result.";

/** The model-visible text of a cancelled call. Clients read it as `part.cancelled`. */
export function cancellationText(reason: string | null | undefined): string {
  return reason ? `Cancelled: ${reason}` : ABANDONED_TEXT;
}

/** The model-visible text of a call abandoned because its run failed. */
export function failureText(reason: string | null | undefined): string {
  return reason ? `Run failed: ${reason}` : "Run failed before this call produced a result.";
}

export const INTERRUPTED_TEXT =
  "Interrupted: the server stopped while this tool was running, and PAI does not re-run tools automatically.";
