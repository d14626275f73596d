import { describe, expect, it } from "vitest";
import { PaiError } from "../errors/pai-error.js";
import { isJsonValue, normalizeJson, sanitizeForOutput } from "./json-value.js";

function rejection(value: unknown): PaiError {
  try {
    normalizeJson(value, "Tool output");
  } catch (error) {
    expect(PaiError.isInstance(error)).toBe(true);
    return error as PaiError;
  }
  throw new Error("expected normalizeJson to reject");
}

describe("normalizeJson", () => {
  it("keeps JSON values unchanged", () => {
    const value = { a: 1, b: "x", c: [true, null, { d: -0.5 }], e: {} };
    expect(normalizeJson(value)).toEqual(value);
  });

  it("omits undefined object properties at any depth, like JSON.stringify", () => {
    expect(normalizeJson({ a: 1, b: undefined, nested: { c: undefined, d: [{ e: undefined }] } })).toEqual({
      a: 1,
      nested: { d: [{}] },
    });
  });

  it("accepts null-prototype objects", () => {
    const bare = Object.assign(Object.create(null), { a: 1 });
    expect(normalizeJson(bare)).toEqual({ a: 1 });
  });

  it("rejects undefined array entries and holes with their path", () => {
    const error = rejection({ items: [1, undefined] });
    expect(error.code).toBe("INVALID_INPUT");
    expect(error.message).toContain("$.items[1] is undefined");
    expect(error.issues).toEqual([{ message: "undefined is not JSON", path: ["items", 1] }]);
    // biome-ignore lint/suspicious/noSparseArray: a hole is the case under test.
    expect(rejection([1, , 3]).message).toContain("$[1] is undefined");
  });

  it("rejects a top-level undefined", () => {
    expect(rejection(undefined).message).toBe(
      "Tool output: the value is undefined, which cannot round-trip through JSON. Convert it to a string, number, boolean, null, array or plain object first.",
    );
  });

  it("rejects functions, symbols and bigint with their path", () => {
    expect(rejection({ f: () => 1 }).message).toContain("$.f is a function");
    expect(rejection({ s: Symbol("x") }).message).toContain("$.s is a symbol");
    expect(rejection({ n: [10n] }).message).toContain("$.n[0] is a bigint");
  });

  it("rejects NaN and infinities", () => {
    expect(rejection({ x: Number.NaN }).message).toContain("$.x is NaN");
    expect(rejection([Number.POSITIVE_INFINITY]).message).toContain("$[0] is Infinity");
    expect(rejection({ y: Number.NEGATIVE_INFINITY }).message).toContain("$.y is -Infinity");
  });

  it("rejects Dates, Maps and class instances unless converted", () => {
    expect(rejection({ at: new Date(0) }).message).toContain("$.at is an instance of Date");
    expect(rejection({ m: new Map() }).message).toContain("$.m is an instance of Map");
    class Point {
      x = 1;
    }
    expect(rejection({ p: new Point() }).message).toContain("$.p is an instance of Point");
    expect(normalizeJson({ at: new Date(0).toISOString() })).toEqual({ at: "1970-01-01T00:00:00.000Z" });
  });

  it("rejects cycles but accepts shared (non-circular) references", () => {
    const cyclic: Record<string, unknown> = { a: 1 };
    cyclic.self = cyclic;
    expect(rejection(cyclic).message).toContain("$.self is a circular reference");
    const shared = { v: 1 };
    expect(normalizeJson({ left: shared, right: shared })).toEqual({ left: { v: 1 }, right: { v: 1 } });
  });

  it("rejects symbol-keyed properties", () => {
    expect(rejection({ [Symbol("k")]: 1 }).message).toContain("a symbol-keyed property");
  });

  it("returns a copy, not the input", () => {
    const input = { a: { b: 1 } };
    const output = normalizeJson(input) as { a: { b: number } };
    expect(output).not.toBe(input);
    expect(output.a).not.toBe(input.a);
  });
});

describe("isJsonValue", () => {
  it("tells lossless JSON values apart", () => {
    expect(isJsonValue({ a: [1, "2", null] })).toBe(true);
    expect(isJsonValue({ a: new Date() })).toBe(false);
    expect(isJsonValue(undefined)).toBe(false);
  });
});

describe("sanitizeForOutput", () => {
  it("returns a clean value as is, without copying", () => {
    const value = { a: [1, { b: "x" }], c: null };
    expect(sanitizeForOutput(value)).toBe(value);
  });

  it("cuts what is nested too deep and escapes forbidden keys, leaving the rest", () => {
    let deep: unknown = 1;
    for (let index = 0; index < 10; index++) deep = { a: deep };
    const value = { keep: [1, 2], deep, ...JSON.parse('{"__proto__":{"x":1}}') };
    const safe = sanitizeForOutput(value, 5) as Record<string, unknown>;
    expect(safe.keep).toBe(value.keep);
    expect(JSON.stringify(safe.deep)).toContain("nested deeper than 5 levels");
    expect(Object.keys(safe)).toEqual(["keep", "deep", "[__proto__]"]);
    expect(Object.getPrototypeOf(safe)).toBe(Object.prototype);
  });
});
