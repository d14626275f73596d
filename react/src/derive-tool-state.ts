import type { RunRow } from "@pai/core";
import type { ProjectedToolPart } from "@pai/core/protocol";
import type { ToolRenderState } from "./render-types.js";

const ACTIVE_RUN = new Set<RunRow["status"]>(["queued", "running", "waiting"]);

/**
 * Derives a tool call's presentation state. The native part state decides once the call has a
 * result; before that, a pending action means `waiting`, and otherwise the owning run tells
 * whether the call is still being worked on or was left behind by a run that ended.
 *
 * @param run the run that owns the part's message, or null when it is not known
 * @param hasPendingAction whether the call has a pending action right now
 */
export function deriveToolState(
  part: Pick<ProjectedToolPart, "state" | "cancelled">,
  run: Pick<RunRow, "status"> | null,
  hasPendingAction: boolean,
): ToolRenderState {
  if (part.cancelled) return "cancelled";
  switch (part.state) {
    case "output-available":
      return "done";
    case "output-error":
      return "error";
    // The user declined the call: nothing failed, it just did not happen.
    case "output-denied":
      return "cancelled";
    default:
      break;
  }
  if (hasPendingAction) return "waiting";
  if (run && !ACTIVE_RUN.has(run.status)) return run.status === "cancelled" ? "cancelled" : "error";
  return part.state === "input-streaming" ? "streaming" : "running";
}
