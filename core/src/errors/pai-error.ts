/**
 * The closed set of PAI error codes. Every transport maps each one exhaustively
 * (see `PAI_ERROR_HTTP_STATUS`), so adding a code fails to compile until it has a mapping.
 */
export const PAI_ERROR_CODES = {
  INVALID_INPUT: "INVALID_INPUT",
  NOT_FOUND: "NOT_FOUND",
  CONFLICT: "CONFLICT",
  TOOL_DISABLED: "TOOL_DISABLED",
  INVALID_DEFINITION: "INVALID_DEFINITION",
  UNSUPPORTED_ENTRY: "UNSUPPORTED_ENTRY",
  FORBIDDEN: "FORBIDDEN",
  PAYLOAD_TOO_LARGE: "PAYLOAD_TOO_LARGE",
  TOO_MANY_REQUESTS: "TOO_MANY_REQUESTS",
  MIGRATION_REQUIRED: "MIGRATION_REQUIRED",
  INTERNAL: "INTERNAL",
} as const;

export type PaiErrorCode = keyof typeof PAI_ERROR_CODES;

/** HTTP status per code; a `Record` so a new code cannot be added without one. */
export const PAI_ERROR_HTTP_STATUS: Record<PaiErrorCode, number> = {
  INVALID_INPUT: 400,
  NOT_FOUND: 404,
  CONFLICT: 409,
  TOOL_DISABLED: 412,
  INVALID_DEFINITION: 500,
  UNSUPPORTED_ENTRY: 400,
  FORBIDDEN: 403,
  PAYLOAD_TOO_LARGE: 413,
  TOO_MANY_REQUESTS: 429,
  MIGRATION_REQUIRED: 409,
  INTERNAL: 500,
};

/** One validation problem, shaped like a Standard Schema issue with a plain path. */
export type PaiIssue = { message: string; path: Array<string | number> };

const marker = Symbol.for("pai.error");

export type PaiErrorOptions = {
  cause?: unknown;
  issues?: PaiIssue[];
  details?: Record<string, unknown>;
};

/**
 * The one error class of PAI. `code` is from a closed set; `message` says what to do next.
 * `PaiError.isInstance` works across duplicate installs of the package.
 */
export class PaiError extends Error {
  readonly [marker] = true;
  readonly code: PaiErrorCode;
  readonly issues?: PaiIssue[];
  readonly details?: Record<string, unknown>;

  constructor(code: PaiErrorCode, message: string, options: PaiErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = "PaiError";
    this.code = code;
    if (options.issues) this.issues = options.issues;
    if (options.details) this.details = options.details;
  }

  static isInstance(value: unknown): value is PaiError {
    return typeof value === "object" && value !== null && (value as Record<symbol, unknown>)[marker] === true;
  }

  /** Plain JSON view for transports; never includes `cause` or stacks. */
  toJSON(): { code: PaiErrorCode; message: string; issues?: PaiIssue[]; details?: Record<string, unknown> } {
    return {
      code: this.code,
      message: this.message,
      ...(this.issues ? { issues: this.issues } : {}),
      ...(this.details ? { details: this.details } : {}),
    };
  }
}

/** Generic text shown to clients in place of an unexpected error's message. */
export const REDACTED_ERROR_MESSAGE = "An internal error occurred. The server log has the details.";

/**
 * The error a request answers for an unexpected failure: a generic sentence and a correlation
 * id that the server's error report (`onRuntimeError`) carries too, so an operator can find the
 * details without the client ever seeing them.
 */
export function internalErrorFor(correlationId: string): PaiError {
  return new PaiError(
    "INTERNAL",
    `An internal error occurred (reference ${correlationId}). The server log has the details under that reference.`,
    { details: { correlationId } },
  );
}

/** The correlation id of an error made by `internalErrorFor`, else null. */
export function correlationIdOf(error: unknown): string | null {
  if (!PaiError.isInstance(error) || error.code !== "INTERNAL") return null;
  const id = error.details?.correlationId;
  return typeof id === "string" ? id : null;
}

/**
 * Normalizes anything thrown into a `PaiError`. Unknown throws become `INTERNAL` with the
 * original kept as `cause` (for `onRuntimeError`) and a redacted message for clients.
 */
export function toPaiError(value: unknown): PaiError {
  if (PaiError.isInstance(value)) return value;
  return new PaiError("INTERNAL", REDACTED_ERROR_MESSAGE, { cause: value });
}

/** A readable message from any thrown value. */
export function getErrorMessage(value: unknown): string {
  if (value == null) return "unknown error";
  if (typeof value === "string") return value;
  if (value instanceof Error) return value.message;
  try {
    return JSON.stringify(value);
  } catch {
    return String(value);
  }
}
