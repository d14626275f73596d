import { PaiError } from "../errors/pai-error.js";

export type JsonPrimitive = string | number | boolean | null;
export type JsonValue = JsonPrimitive | JsonValue[] | { [key: string]: JsonValue };
export type JsonObject = { [key: string]: JsonValue };

/** Bounds every JSON value that enters PAI (client input, tool results, tool data, suspend data). */
export type JsonLimits = {
  /** Deepest nesting of arrays and objects. Default 64. */
  maxDepth: number;
  /** Largest value, in characters of its JSON text (UTF-16 units, approximate for escapes). Default 4 MiB. */
  maxSize: number;
};

export const DEFAULT_JSON_LIMITS: JsonLimits = { maxDepth: 64, maxSize: 4 * 1024 * 1024 };

/**
 * Keys refused everywhere: `__proto__` is dropped or turned into a prototype by plain object
 * assignment, and serializers such as superjson refuse to send all three, so a stored value
 * holding one could never be read back through them.
 */
const FORBIDDEN_KEYS = new Set(["__proto__", "constructor", "prototype"]);

/** A path as a parent chain: built in O(1) per level, turned into an array only on failure. */
type PathNode = { parent: PathNode | null; segment: string | number } | null;

function pathOf(node: PathNode): Array<string | number> {
  const path: Array<string | number> = [];
  for (let current = node; current; current = current.parent) path.push(current.segment);
  return path.reverse();
}

function describePath(path: Array<string | number>): string {
  if (path.length === 0) return "the value";
  return `$${path.map((segment) => (typeof segment === "number" ? `[${segment}]` : `.${segment}`)).join("")}`;
}

function refuse(node: PathNode, label: string, what: string, sentence: string): never {
  const path = pathOf(node);
  throw new PaiError("INVALID_INPUT", `${label}: ${describePath(path)} ${sentence}`, {
    issues: [{ message: what, path }],
  });
}

function tooDeep(node: PathNode, label: string, maxDepth: number): never {
  return refuse(
    node,
    label,
    `nested deeper than ${maxDepth} levels`,
    `is nested deeper than the limit of ${maxDepth} levels. Flatten the value.`,
  );
}

function forbiddenKey(node: PathNode, label: string, key: string): never {
  return refuse(
    node,
    label,
    `the key "${key}" is not allowed`,
    `uses the key "${key}", which PAI refuses because it can change object prototypes and cannot be sent by every transport. Rename the key.`,
  );
}

function notJson(node: PathNode, label: string, what: string): never {
  return refuse(
    node,
    label,
    `${what} is not JSON`,
    `is ${what}, which cannot round-trip through JSON. Convert it to a string, number, boolean, null, array or plain object first.`,
  );
}

/**
 * Normalizes a value to its lossless JSON shape, in time linear in its size: object properties
 * whose value is `undefined` are omitted (as `JSON.stringify` does); everything that would not
 * survive a round trip (undefined array entries, functions, symbols, bigint, non-finite numbers,
 * Dates, Maps, class instances, cycles) is refused with the JSON path of the offender, and so
 * are values deeper or larger than `limits` and the keys `__proto__`, `constructor`, `prototype`.
 */
export function normalizeJson(value: unknown, label = "Value", limits: Partial<JsonLimits> = {}): JsonValue {
  const maxDepth = limits.maxDepth ?? DEFAULT_JSON_LIMITS.maxDepth;
  const maxSize = limits.maxSize ?? DEFAULT_JSON_LIMITS.maxSize;
  const seen = new Set<object>();
  let size = 0;
  const grow = (node: PathNode, by: number) => {
    size += by;
    if (size > maxSize) {
      refuse(
        node,
        label,
        `larger than ${maxSize} characters`,
        `makes the value larger than the limit of ${maxSize} characters of JSON. Send less data, or store it elsewhere and pass its id.`,
      );
    }
  };
  const visit = (current: unknown, node: PathNode, depth: number): JsonValue => {
    if (current === null) {
      grow(node, 4);
      return null;
    }
    switch (typeof current) {
      case "string":
        grow(node, current.length + 2);
        return current;
      case "boolean":
        grow(node, 5);
        return current;
      case "number":
        if (!Number.isFinite(current)) notJson(node, label, String(current));
        grow(node, 8);
        return current;
      case "undefined":
        return notJson(node, label, "undefined");
      case "bigint":
        return notJson(node, label, "a bigint");
      case "function":
        return notJson(node, label, "a function");
      case "symbol":
        return notJson(node, label, "a symbol");
    }
    const object = current as object;
    if (depth >= maxDepth) {
      tooDeep(node, label, maxDepth);
    }
    if (seen.has(object)) notJson(node, label, "a circular reference");
    grow(node, 2);
    if (Array.isArray(object)) {
      seen.add(object);
      const result: JsonValue[] = new Array(object.length);
      for (let index = 0; index < object.length; index++) {
        const child: PathNode = { parent: node, segment: index };
        if (!(index in object) || object[index] === undefined) notJson(child, label, "undefined");
        grow(child, 1);
        result[index] = visit(object[index], child, depth + 1);
      }
      seen.delete(object);
      return result;
    }
    const prototype = Object.getPrototypeOf(object);
    if (prototype !== Object.prototype && prototype !== null) {
      const name = (object as { constructor?: { name?: string } }).constructor?.name ?? "object";
      notJson(node, label, `an instance of ${name}`);
    }
    seen.add(object);
    const result: JsonObject = {};
    for (const key of Object.keys(object)) {
      const child: PathNode = { parent: node, segment: key };
      if (FORBIDDEN_KEYS.has(key)) {
        forbiddenKey(child, label, key);
      }
      const entry = (object as Record<string, unknown>)[key];
      if (entry === undefined) continue;
      grow(child, key.length + 4);
      result[key] = visit(entry, child, depth + 1);
    }
    for (const symbol of Object.getOwnPropertySymbols(object)) {
      notJson({ parent: node, segment: String(symbol) }, label, "a symbol-keyed property");
    }
    seen.delete(object);
    return result;
  };
  return visit(value, null, 0);
}

/** True when a value is JSON within `limits` (see `normalizeJson`). */
export function isJsonValue(value: unknown, limits?: Partial<JsonLimits>): value is JsonValue {
  try {
    normalizeJson(value, "Value", limits);
    return true;
  } catch {
    return false;
  }
}

/**
 * Checks a value before a schema parses it: parsers rebuild objects by assignment, which
 * silently drops an own `__proto__` key, so forbidden keys and excess depth are refused here,
 * on the raw value. Values that are not plain objects or arrays are left to the schema.
 */
export function assertPlainKeys(value: unknown, label = "Value", limits: Partial<JsonLimits> = {}): void {
  const maxDepth = limits.maxDepth ?? DEFAULT_JSON_LIMITS.maxDepth;
  const seen = new Set<object>();
  const visit = (current: unknown, node: PathNode, depth: number): void => {
    if (current === null || typeof current !== "object" || seen.has(current)) return;
    const isArray = Array.isArray(current);
    const prototype = Object.getPrototypeOf(current);
    if (!isArray && prototype !== Object.prototype && prototype !== null) return;
    if (depth >= maxDepth) {
      tooDeep(node, label, maxDepth);
    }
    seen.add(current);
    if (isArray) {
      for (let index = 0; index < current.length; index++) {
        visit(current[index], { parent: node, segment: index }, depth + 1);
      }
      return;
    }
    for (const key of Object.keys(current)) {
      const child: PathNode = { parent: node, segment: key };
      if (FORBIDDEN_KEYS.has(key)) {
        forbiddenKey(child, label, key);
      }
      visit((current as Record<string, unknown>)[key], child, depth + 1);
    }
  };
  visit(value, null, 0);
}

/**
 * Makes a value that is about to leave PAI (a read's result) safe for every serializer, whatever
 * its stored rows hold: a subtree nested deeper than `maxDepth` becomes a short notice string and
 * a forbidden key is escaped as `[key]`. Input is bounded before it is written, so this only
 * matters for rows written before those bounds or by other tools; such a row must never make a
 * read fail. Copy-on-write: a clean value is returned as is, in one linear walk.
 */
export function sanitizeForOutput<T>(value: T, maxDepth = 128): T {
  const visit = (current: unknown, depth: number): unknown => {
    if (current === null || typeof current !== "object") return current;
    const isArray = Array.isArray(current);
    const prototype = Object.getPrototypeOf(current);
    if (!isArray && prototype !== Object.prototype && prototype !== null) return current;
    if (depth >= maxDepth) return `[PAI: value nested deeper than ${maxDepth} levels, not returned]`;
    if (isArray) {
      let copy: unknown[] | null = null;
      for (let index = 0; index < current.length; index++) {
        const entry = current[index];
        const next = visit(entry, depth + 1);
        if (next !== entry && !copy) copy = current.slice(0, index);
        if (copy) copy.push(next);
      }
      return copy ?? current;
    }
    let copy: Record<string, unknown> | null = null;
    const keys = Object.keys(current);
    for (let index = 0; index < keys.length; index++) {
      const key = keys[index]!;
      const entry = (current as Record<string, unknown>)[key];
      const next = visit(entry, depth + 1);
      const forbidden = FORBIDDEN_KEYS.has(key);
      if ((next !== entry || forbidden) && !copy) {
        copy = {};
        for (const earlier of keys.slice(0, index))
          copy[earlier] = (current as Record<string, unknown>)[earlier];
      }
      if (copy)
        Object.defineProperty(copy, forbidden ? `[${key}]` : key, {
          value: next,
          enumerable: true,
          writable: true,
          configurable: true,
        });
    }
    return copy ?? current;
  };
  return visit(value, 0) as T;
}
