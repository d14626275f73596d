import { PaiError } from "@pai/core";
import { TRPCError } from "@trpc/server";

/**
 * Input errors are summarized before they reach the client: a schema error's default message is
 * the issues as pretty-printed JSON (100,000 unknown keys make a 4 MB answer), so it becomes one
 * sentence naming the first few paths and what is wrong with each.
 */
export type MiddlewareResult = { ok: true } | { ok: false; error: TRPCError };

const MAX_ERROR_MESSAGE = 2_000;
const MAX_ISSUES = 10;

/**
 * A BAD_REQUEST whose message and issues are bounded: a schema's issues become one readable
 * sentence (`Invalid input: threadId: Too big: ...`) keeping the first few with their paths. Any
 * other BAD_REQUEST (PAI's own messages, a body tRPC could not parse) keeps its message when short.
 */
export function boundedInputError(error: TRPCError): TRPCError {
  const raw = (error.cause as { issues?: unknown } | undefined)?.issues;
  // PAI's own errors already say what is wrong in words; only a schema's issues are rewritten.
  const schemaIssues = Array.isArray(raw) && raw.length > 0 && !PaiError.isInstance(error.cause);
  if (!schemaIssues && error.message.length <= MAX_ERROR_MESSAGE) return error;
  const listed = Array.isArray(raw) ? raw : [];
  const flat = flattenUnions(listed);
  const issues = flat.slice(0, MAX_ISSUES).map((issue: Record<string, unknown>) => ({
    message: String(issue.message ?? "invalid").slice(0, 300),
    path: (Array.isArray(issue.path) ? issue.path : [])
      .slice(0, 20)
      .map((segment: unknown) => (typeof segment === "number" ? segment : String(segment).slice(0, 100))),
  }));
  // The flattening stops past MAX_ISSUES, so only the top level's count is exact.
  const total = listed.length > MAX_ISSUES ? String(listed.length) : `more than ${MAX_ISSUES}`;
  const summary = issues
    .map((issue) => `${issue.path.length ? issue.path.join(".") : "input"}: ${issue.message}`)
    .join("; ");
  const message =
    `Invalid input${flat.length > MAX_ISSUES ? ` (${total} problems, first ${MAX_ISSUES} shown)` : ""}: ${summary}`.slice(
      0,
      MAX_ERROR_MESSAGE,
    );
  return new TRPCError({
    code: "BAD_REQUEST",
    message,
    cause: new PaiError("INVALID_INPUT", message, { issues }),
  });
}

type RawIssue = Record<string, unknown> & { path?: unknown[] };

/** At most this many issues are looked at in all, so a hostile input cannot make the summary costly. */
const MAX_SCANNED = 200;
/** Unions nested deeper than this keep their own issue. */
const MAX_UNION_DEPTH = 5;

/**
 * A failed union is reported as "Invalid input" at the union's path, its branches' own issues
 * nested inside. The sentence is more useful with the issues of the branch the value was meant
 * for: the first branch that did not fail on the value's type as a whole. When every branch did,
 * the union's issue stays, naming the types it accepts.
 */
function flattenUnions(raw: readonly unknown[], depth = 0, budget = { left: MAX_SCANNED }): RawIssue[] {
  const out: RawIssue[] = [];
  for (const item of raw) {
    if (budget.left-- <= 0 || out.length > MAX_ISSUES) break;
    if (typeof item !== "object" || item === null) continue;
    const issue = item as RawIssue;
    const branches = issue.code === "invalid_union" && Array.isArray(issue.errors) ? issue.errors : [];
    const path = Array.isArray(issue.path) ? issue.path : [];
    const meant =
      depth < MAX_UNION_DEPTH
        ? branches.find((branch) => Array.isArray(branch) && !wrongTypeOnly(branch))
        : undefined;
    if (Array.isArray(meant)) {
      for (const nested of flattenUnions(meant, depth + 1, budget)) {
        out.push({ ...nested, path: [...path, ...(Array.isArray(nested.path) ? nested.path : [])] });
      }
      continue;
    }
    const expected = branches.flatMap((branch) =>
      Array.isArray(branch) && typeof branch[0]?.expected === "string" ? [branch[0].expected] : [],
    );
    out.push(
      expected.length === branches.length && expected.length > 0
        ? { ...issue, message: `Invalid input: expected ${[...new Set(expected)].join(" or ")}` }
        : issue,
    );
  }
  return out;
}

/** A branch that failed only because the value was not of its type at all. */
const wrongTypeOnly = (branch: unknown[]) =>
  branch.length === 1 &&
  (branch[0] as RawIssue | undefined)?.code === "invalid_type" &&
  ((branch[0] as RawIssue).path ?? []).length === 0;
