import { PaiError } from "@pai/core";
import { TRPCError } from "@trpc/server";

/**
 * Input errors are summarized before they reach the client: a schema error's default message
 * lists every issue (100,000 unknown keys make a 4 MB answer), so it is cut to a few.
 */
export type MiddlewareResult = { ok: true } | { ok: false; error: TRPCError };

const MAX_ERROR_MESSAGE = 2_000;
const MAX_ISSUES = 10;

/** A BAD_REQUEST whose message and issues are bounded, keeping the first few issues with their paths. */
export function boundedInputError(error: TRPCError): TRPCError {
  if (error.message.length <= MAX_ERROR_MESSAGE) return error;
  const raw = (error.cause as { issues?: unknown } | undefined)?.issues;
  const issues = (Array.isArray(raw) ? raw : [])
    .slice(0, MAX_ISSUES)
    .map((issue: Record<string, unknown>) => ({
      message: String(issue.message ?? "invalid").slice(0, 300),
      path: (Array.isArray(issue.path) ? issue.path : [])
        .slice(0, 20)
        .map((segment: unknown) => (typeof segment === "number" ? segment : String(segment).slice(0, 100))),
    }));
  const total = Array.isArray(raw) ? raw.length : 0;
  const summary = issues
    .map((issue) => `${issue.path.length ? issue.path.join(".") : "input"}: ${issue.message}`)
    .join("; ");
  const message =
    `Invalid input${total > MAX_ISSUES ? ` (${total} problems, first ${MAX_ISSUES} shown)` : ""}: ${summary}`.slice(
      0,
      MAX_ERROR_MESSAGE,
    );
  return new TRPCError({
    code: "BAD_REQUEST",
    message,
    cause: new PaiError("INVALID_INPUT", message, { issues }),
  });
}
