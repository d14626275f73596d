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
 * The walk keeps one frame per open container (at most `MAX_WALK_DEPTH`) and builds a path only
 * for the offender it returns, so it costs time linear in the value's size and memory linear in
 * its depth, however wide each level is.
 */
export function findUnstorableText(
  value: unknown,
  skipKeys: ReadonlySet<string> = new Set(),
): Array<string | number> | null {
  // A container being walked: its entries (by index, or by its own keys) and the next to visit.
  type Frame = { container: unknown; keys: string[] | null; length: number; next: number };
  const frames: Frame[] = [];
  /** The path of the entry each open frame is at, then `last`. */
  const pathTo = (last?: string): Array<string | number> => {
    const path: Array<string | number> = frames.map((frame) =>
      frame.keys ? (frame.keys[frame.next - 1] as string) : frame.next - 1,
    );
    if (last !== undefined) path.push(last);
    return path;
  };
  /** Opens a container for the walk; returns the path of an unstorable key it holds, else null. */
  const open = (current: unknown): Array<string | number> | null => {
    if (current === null || typeof current !== "object" || frames.length >= MAX_WALK_DEPTH) return null;
    if (Array.isArray(current)) {
      frames.push({ container: current, keys: null, length: current.length, next: 0 });
      return null;
    }
    const prototype = Object.getPrototypeOf(current);
    if (prototype !== Object.prototype && prototype !== null) return null;
    let keys = Object.keys(current);
    if (frames.length === 0 && skipKeys.size > 0) keys = keys.filter((key) => !skipKeys.has(key));
    // Keys are checked before any entry, the last offending key first.
    for (let index = keys.length - 1; index >= 0; index--) {
      if (isUnstorableText(keys[index] as string)) return pathTo(keys[index]);
    }
    frames.push({ container: current, keys, length: keys.length, next: 0 });
    return null;
  };

  if (typeof value === "string") return isUnstorableText(value) ? [] : null;
  const refusedKey = open(value);
  if (refusedKey) return refusedKey;
  while (frames.length > 0) {
    const frame = frames[frames.length - 1] as Frame;
    if (frame.next >= frame.length) {
      frames.pop();
      continue;
    }
    const index = frame.next++;
    const entry = frame.keys
      ? (frame.container as Record<string, unknown>)[frame.keys[index] as string]
      : (frame.container as unknown[])[index];
    if (typeof entry === "string") {
      if (isUnstorableText(entry)) return pathTo();
      continue;
    }
    const found = open(entry);
    if (found) return found;
  }
  return null;
}
