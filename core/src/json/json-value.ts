import { PaiError } from "../errors/pai-error.js";

export type JsonPrimitive = string | number | boolean | null;
export type JsonValue = JsonPrimitive | JsonValue[] | { [key: string]: JsonValue };
export type JsonObject = { [key: string]: JsonValue };

function describePath(path: Array<string | number>): string {
  if (path.length === 0) return "the value";
  return `$${path.map((segment) => (typeof segment === "number" ? `[${segment}]` : `.${segment}`)).join("")}`;
}

function reject(path: Array<string | number>, what: string, label: string): never {
  throw new PaiError(
    "INVALID_INPUT",
    `${label}: ${describePath(path)} is ${what}, which cannot round-trip through JSON. Convert it to a string, number, boolean, null, array or plain object first.`,
    { issues: [{ message: `${what} is not JSON`, path }] },
  );
}

/**
 * Normalizes a value to its lossless JSON shape: object properties whose value is
 * `undefined` are omitted (as `JSON.stringify` does); everything that would not survive a
 * round trip (undefined array entries, functions, symbols, bigint, non-finite numbers,
 * Dates, Maps, class instances, cycles) is rejected with the JSON path of the offender.
 */
export function normalizeJson(value: unknown, label = "Value"): JsonValue {
  const seen = new Set<object>();
  const visit = (current: unknown, path: Array<string | number>): JsonValue => {
    if (current === null) return null;
    switch (typeof current) {
      case "string":
      case "boolean":
        return current;
      case "number":
        if (!Number.isFinite(current)) reject(path, String(current), label);
        return current;
      case "undefined":
        return reject(path, "undefined", label);
      case "bigint":
        return reject(path, "a bigint", label);
      case "function":
        return reject(path, "a function", label);
      case "symbol":
        return reject(path, "a symbol", label);
    }
    const object = current as object;
    if (seen.has(object)) reject(path, "a circular reference", label);
    if (Array.isArray(object)) {
      seen.add(object);
      const result: JsonValue[] = [];
      for (let index = 0; index < object.length; index++) {
        if (!(index in object) || object[index] === undefined) reject([...path, index], "undefined", label);
        result.push(visit(object[index], [...path, index]));
      }
      seen.delete(object);
      return result;
    }
    const prototype = Object.getPrototypeOf(object);
    if (prototype !== Object.prototype && prototype !== null) {
      const name = (object as { constructor?: { name?: string } }).constructor?.name ?? "object";
      reject(path, `an instance of ${name}`, label);
    }
    seen.add(object);
    const result: JsonObject = {};
    for (const key of Object.keys(object)) {
      const entry = (object as Record<string, unknown>)[key];
      if (entry === undefined) continue;
      result[key] = visit(entry, [...path, key]);
    }
    for (const symbol of Object.getOwnPropertySymbols(object)) {
      reject([...path, String(symbol)], "a symbol-keyed property", label);
    }
    seen.delete(object);
    return result;
  };
  return visit(value, []);
}

/** True when a value is already in lossless JSON shape. */
export function isJsonValue(value: unknown): value is JsonValue {
  try {
    normalizeJson(value);
    return true;
  } catch {
    return false;
  }
}
