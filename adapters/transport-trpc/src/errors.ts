import {
  correlationIdOf,
  internalErrorFor,
  PaiError,
  type PaiErrorCode,
  type PaiIssue,
  toPaiError,
} from "@pai/core";
import { type TRPC_ERROR_CODE_KEY, TRPCError } from "@trpc/server";

/**
 * tRPC code per PAI error code. A `Record` over the closed code set, so a new PAI code does
 * not compile until it has a mapping here.
 */
export const PAI_TO_TRPC_CODE: Record<PaiErrorCode, TRPC_ERROR_CODE_KEY> = {
  INVALID_INPUT: "BAD_REQUEST",
  UNSUPPORTED_ENTRY: "BAD_REQUEST",
  NOT_FOUND: "NOT_FOUND",
  CONFLICT: "CONFLICT",
  MIGRATION_REQUIRED: "CONFLICT",
  FORBIDDEN: "FORBIDDEN",
  TOOL_DISABLED: "PRECONDITION_FAILED",
  PAYLOAD_TOO_LARGE: "PAYLOAD_TOO_LARGE",
  TOO_MANY_REQUESTS: "TOO_MANY_REQUESTS",
  INVALID_DEFINITION: "INTERNAL_SERVER_ERROR",
  INTERNAL: "INTERNAL_SERVER_ERROR",
};

/** Codes whose message may expose server internals; clients get a generic sentence instead. */
const REDACTED_CODES = new Set<PaiErrorCode>(["INTERNAL", "INVALID_DEFINITION"]);

/**
 * The error a PAI procedure throws. Thrown `TRPCError`s (e.g. the host's UNAUTHORIZED from
 * `identity(ctx)`) pass through; `PaiError`s map to their tRPC code with their message and
 * keep the `PaiError` as `cause` (its `issues` reach clients through `paiErrorData`);
 * anything else answers INTERNAL with only a correlation id: the service already reported the
 * error under that id to `onRuntimeError`; an error the router meets itself goes to
 * `onInternalError` with a fresh id.
 */
export function toTrpcError(
  error: unknown,
  onInternalError?: (error: unknown, correlationId: string) => void,
): TRPCError {
  if (error instanceof TRPCError) return error;
  const known = correlationIdOf(error);
  if (known) {
    const redacted = internalErrorFor(known);
    return new TRPCError({ code: "INTERNAL_SERVER_ERROR", message: redacted.message, cause: redacted });
  }
  const pai = toPaiError(error);
  if (REDACTED_CODES.has(pai.code)) {
    const correlationId = globalThis.crypto.randomUUID();
    onInternalError?.(PaiError.isInstance(error) ? error : (pai.cause ?? error), correlationId);
    const redacted = internalErrorFor(correlationId);
    return new TRPCError({ code: "INTERNAL_SERVER_ERROR", message: redacted.message, cause: redacted });
  }
  return new TRPCError({ code: PAI_TO_TRPC_CODE[pai.code], message: pai.message, cause: pai });
}

/** What `paiErrorData` adds to the error shape's `data` for clients. */
export type PaiErrorData = { code: PaiErrorCode; issues?: PaiIssue[]; correlationId?: string };

function issuesOf(cause: unknown): PaiIssue[] | undefined {
  const issues = (cause as { issues?: unknown } | null)?.issues;
  if (!Array.isArray(issues)) return undefined;
  return issues.map((issue: { message?: unknown; path?: unknown }) => ({
    message: String(issue.message ?? "invalid"),
    path: Array.isArray(issue.path)
      ? issue.path.map((segment: unknown) =>
          typeof segment === "number" ? segment : String((segment as { key?: unknown })?.key ?? segment),
        )
      : [],
  }));
}

/**
 * PAI details of a tRPC error for the host's `errorFormatter`: the PAI code and validation
 * issues (from a `PaiError` or a failed input schema). Returns null for non-PAI errors.
 *
 * @example
 * initTRPC.context<Ctx>().create({
 *   errorFormatter: ({ shape, error }) => ({ ...shape, data: { ...shape.data, pai: paiErrorData(error) } }),
 * });
 */
export function paiErrorData(error: TRPCError): PaiErrorData | null {
  const { cause } = error;
  if (PaiError.isInstance(cause)) {
    const correlationId = correlationIdOf(cause);
    return {
      code: cause.code,
      ...(cause.issues ? { issues: cause.issues } : {}),
      ...(correlationId ? { correlationId } : {}),
    };
  }
  if (error.code === "BAD_REQUEST") {
    const issues = issuesOf(cause);
    if (issues) return { code: "INVALID_INPUT", issues };
  }
  return null;
}
