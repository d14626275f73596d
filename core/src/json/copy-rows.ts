/** Nesting deeper than this is handed to `structuredClone`, which also ends cycles. */
const MAX_DEPTH = 200;

/**
 * A deep copy of stored rows (plain JSON), for a storage adapter or the runtime handing out
 * rows a caller may change. Copying plain objects and arrays by hand costs a fraction of
 * `structuredClone`'s serialize-and-parse round trip, which dominated the memory adapter's
 * share of a run. Anything that is not a
 * plain object or array (a Date, a Map, a class instance) and anything nested implausibly
 * deep (possibly a cycle) goes to `structuredClone`, so the result never shares a mutable
 * object with the input, and values `structuredClone` refuses (functions) still throw.
 */
export function copyRows<T>(value: T): T {
  return copy(value, 0) as T;
}

function copy(value: unknown, depth: number): unknown {
  if (typeof value !== "object" || value === null) {
    if (typeof value === "function" || typeof value === "symbol") return structuredClone(value);
    return value;
  }
  if (depth > MAX_DEPTH) return structuredClone(value);
  if (Array.isArray(value)) {
    if (Object.getPrototypeOf(value) !== Array.prototype) return structuredClone(value);
    const out: unknown[] = new Array(value.length);
    for (let index = 0; index < value.length; index++) {
      // Holes stay holes, as with structuredClone.
      if (index in value) out[index] = copy(value[index], depth + 1);
    }
    return out;
  }
  const prototype = Object.getPrototypeOf(value);
  if (prototype !== Object.prototype && prototype !== null) return structuredClone(value);
  const source = value as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(source)) {
    const item = copy(source[key], depth + 1);
    // Assigning "__proto__" would replace the copy's prototype instead of adding a key.
    if (key === "__proto__") {
      Object.defineProperty(out, key, { value: item, enumerable: true, writable: true, configurable: true });
    } else out[key] = item;
  }
  return out;
}
