/**
 * Demo tools whose call may be started again after the server stopped in the middle of it.
 * PAI runs a call at most once and never re-runs an interrupted one (docs/decisions.md §5), and
 * the tool contract declares no retry policy, so the playground keeps its own next to the tools:
 * a tool belongs here only when running it twice does no harm. The web UI offers "Retry" for
 * exactly these; a retry is a new user turn, not a re-run of the old call.
 */
export const RETRYABLE_TOOLS: ReadonlySet<string> = new Set([
  // Deploying the same service again converges on the same result.
  "deployService",
  // Writes a new file; the interrupted call never reported one.
  "exportCsv",
  // Reads only.
  "adminStats",
]);
