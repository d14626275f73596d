import { correlationIdOf, internalErrorFor, PaiError } from "../errors/pai-error.js";
import { sanitizeForOutput } from "../json/json-value.js";
import { findUnstorableText } from "../json/storable-text.js";
import type { RuntimeErrorReport } from "../runtime/runtime-options.js";

/**
 * Every service call answers either its result, a `PaiError` a client can act on, or an
 * INTERNAL error that carries only a correlation id. The unexpected error itself goes to
 * `onRuntimeError` with the same id, so no transport can leak a stack, SQL text or driver
 * message by accident. Results pass `sanitizeForOutput`, so a stored row no request could write
 * today (too deep, a `__proto__` key) still reads instead of failing the transport.
 */
export function guardService<T extends object>(
  service: T,
  report: (report: RuntimeErrorReport) => void,
  newId: () => string,
): T {
  const redact = (error: unknown, operation: string): unknown => {
    if (correlationIdOf(error)) return error;
    if (PaiError.isInstance(error) && error.code !== "INTERNAL" && error.code !== "INVALID_DEFINITION") {
      return error;
    }
    const correlationId = newId();
    report({ error, phase: "request", correlationId, operation });
    return internalErrorFor(correlationId);
  };
  const wrap = (value: unknown, path: string): unknown => {
    if (typeof value === "function") {
      const method = value as (...args: unknown[]) => unknown;
      return (...args: unknown[]) => {
        let result: unknown;
        const refused = unstorableTextError(args[0], path);
        // An async method answers with a rejection, as its own checks would; others throw.
        if (refused && isAsyncFunction(method)) return Promise.reject(refused);
        try {
          if (refused) throw refused;
          result = method(...args);
        } catch (error) {
          throw redact(error, path);
        }
        if (result instanceof Promise) {
          return result.then(sanitizeForOutput, (error) => Promise.reject(redact(error, path)));
        }
        if (result && typeof result === "object" && Symbol.asyncIterator in result) {
          return guardIterable(result as AsyncIterable<unknown>, (error) => redact(error, path));
        }
        return sanitizeForOutput(result);
      };
    }
    if (value && typeof value === "object") {
      return Object.fromEntries(
        Object.entries(value).map(([key, entry]) => [key, wrap(entry, path ? `${path}.${key}` : key)]),
      );
    }
    return value;
  };
  return wrap(service, "") as T;
}

async function* guardIterable<T>(iterable: AsyncIterable<T>, redact: (error: unknown) => unknown) {
  try {
    for await (const item of iterable) yield sanitizeForOutput(item);
  } catch (error) {
    throw redact(error);
  }
}

/** The host's identity is its own business; everything else a caller sends must be storable. */
const NOT_CHECKED = new Set(["identity"]);

const AsyncFunction = (async () => undefined).constructor;

function isAsyncFunction(fn: (...args: unknown[]) => unknown): boolean {
  return fn instanceof AsyncFunction;
}

function unstorableTextError(input: unknown, operation: string): PaiError | null {
  const path = findUnstorableText(input, NOT_CHECKED);
  if (!path) return null;
  const at =
    path.length === 0
      ? "the input"
      : path
          .map((key) => (typeof key === "number" ? `[${key}]` : `.${key}`))
          .join("")
          .slice(1);
  const message = `${at} holds a NUL character (U+0000) or an unpaired UTF-16 surrogate, which storage cannot keep. Remove it, or send well-formed Unicode text (${operation}).`;
  return new PaiError("INVALID_INPUT", message, { issues: [{ path, message }] });
}
