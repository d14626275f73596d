// Text every storage can keep: no NUL character and no unpaired UTF-16 surrogate. Postgres
// refuses both (a text or jsonb value cannot hold U+0000, and jsonb rejects a lone surrogate's
// escape), while memory storage keeps them, so the same request failed with INTERNAL on one
// deployment and was stored on another. Checked once, on the way into the service.

// biome-ignore lint/suspicious/noControlCharactersInRegex: finding U+0000 is the point.
const UNSTORABLE = /\u0000|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

/** Deeper than any input the JSON limits let through; what lies below is refused by them. */
const MAX_WALK_DEPTH = 256;

/** Whether `text` holds a NUL character or an unpaired surrogate. */
export function isUnstorableText(text: string): boolean {
  return UNSTORABLE.test(text);
}

/**
 * The path of the first string (value or key) in `value` that no storage can keep, or null.
 * Walks plain objects and arrays only (bytes, streams and class instances are not text), without
 * recursion, so a hostile nesting cannot overflow the stack before the depth limit refuses it.
 */
export function findUnstorableText(
  value: unknown,
  skipKeys: ReadonlySet<string> = new Set(),
): Array<string | number> | null {
  const stack: Array<{ value: unknown; path: Array<string | number> }> = [{ value, path: [] }];
  while (stack.length > 0) {
    const { value: current, path } = stack.pop() as { value: unknown; path: Array<string | number> };
    if (typeof current === "string") {
      if (isUnstorableText(current)) return path;
      continue;
    }
    if (current === null || typeof current !== "object" || path.length >= MAX_WALK_DEPTH) continue;
    if (Array.isArray(current)) {
      for (let index = current.length - 1; index >= 0; index--) {
        stack.push({ value: current[index], path: [...path, index] });
      }
      continue;
    }
    const prototype = Object.getPrototypeOf(current);
    if (prototype !== Object.prototype && prototype !== null) continue;
    for (const key of Object.keys(current).reverse()) {
      if (path.length === 0 && skipKeys.has(key)) continue;
      if (isUnstorableText(key)) return [...path, key];
      stack.push({ value: (current as Record<string, unknown>)[key], path: [...path, key] });
    }
  }
  return null;
}
