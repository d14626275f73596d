import { describe, expect, it } from "vitest";
import type { JsonObject } from "../json/json-value.js";
import { relaxUntrustedSchema, validatingJsonSchema } from "./json-schema-validation.js";

/** JSON Schema's `then`, spelled so the object is not a thenable to linters. */
const THEN = "then";

function check(schema: JsonObject, value: unknown) {
  const result = validatingJsonSchema(schema).validate!(value) as
    | { success: true }
    | { success: false; error: Error };
  return result.success ? "valid" : result.error.message;
}

describe("relaxUntrustedSchema", () => {
  it("copies a schema without unchecked keywords unchanged, and never mutates its input", () => {
    const schema: JsonObject = {
      type: "object",
      properties: { kind: { oneOf: [{ const: "a" }, { const: "b" }] }, n: { not: { type: "string" } } },
      if: { properties: { kind: { const: "a" } } },
      [THEN]: { required: ["n"] },
    };
    const before = structuredClone(schema);
    expect(relaxUntrustedSchema(schema)).toEqual(schema);
    validatingJsonSchema(schema).validate!({ kind: "a", n: 1 });
    expect(schema).toEqual(before);
  });

  it("drops the unchecked keywords, but not properties or data that share their names", () => {
    expect(
      relaxUntrustedSchema({
        type: "object",
        properties: {
          format: { type: "string", format: "email" },
          pattern: { type: "string", pattern: "^a" },
        },
        propertyNames: { pattern: "^[a-z]+$" },
        required: ["format"],
        const: { pattern: "kept", format: "kept" },
        items: { uniqueItems: true },
      }),
    ).toEqual({
      type: "object",
      properties: { format: { type: "string" }, pattern: { type: "string" } },
      propertyNames: {},
      required: ["format"],
      const: { pattern: "kept", format: "kept" },
      items: {},
    });
  });

  it("relaxes the keywords whose outcome a dropped keyword decided", () => {
    expect(relaxUntrustedSchema({ not: { pattern: "^a" }, type: "string" })).toEqual({ type: "string" });
    expect(relaxUntrustedSchema({ oneOf: [{ format: "email" }, { type: "number" }] })).toEqual({
      allOf: [{ anyOf: [{}, { type: "number" }] }],
    });
    expect(
      relaxUntrustedSchema({ if: { pattern: "^a" }, [THEN]: { minLength: 2 }, else: { maxLength: 1 } }),
    ).toEqual({ allOf: [{ anyOf: [{ allOf: [{}, { minLength: 2 }] }, { maxLength: 1 }] }] });
    expect(relaxUntrustedSchema({ contains: { pattern: "^a" }, minContains: 1, maxContains: 2 })).toEqual({
      contains: {},
      minContains: 1,
    });
    // A `$ref` may reach a relaxed part, so `not` over one is relaxed once anything was dropped.
    expect(relaxUntrustedSchema({ $defs: { a: { pattern: "^a" } }, not: { $ref: "#/$defs/a" } })).toEqual({
      $defs: { a: {} },
    });
  });

  it("turns patternProperties into alternatives of additionalProperties", () => {
    expect(
      relaxUntrustedSchema({
        patternProperties: { "^x": { type: "number" } },
        additionalProperties: false,
      }),
    ).toEqual({ additionalProperties: { anyOf: [false, { type: "number" }] } });
    expect(relaxUntrustedSchema({ patternProperties: { "^x": { type: "number" } } })).toEqual({
      additionalProperties: {},
    });
  });
});

describe("validatingJsonSchema", () => {
  it("checks shape as before and reports issues with paths", () => {
    const schema: JsonObject = {
      type: "object",
      properties: { items: { type: "array", items: { type: "integer" } } },
      required: ["items"],
    };
    expect(check(schema, { items: [1, 2] })).toBe("valid");
    expect(check(schema, { items: [1, "2"] })).toContain("items[1]");
    expect(check(schema, {})).toContain('required property "items"');
  });

  it("never runs a client's regular expression, wherever a $ref can reach it", () => {
    const evil = `${"a".repeat(40)}!`;
    const started = performance.now();
    expect(check({ pattern: "^(a+)+$" }, evil)).toBe("valid");
    expect(check({ foo: { pattern: "^(a+)+$" }, $ref: "#/foo" }, evil)).toBe("valid");
    expect(check({ dependencies: { pattern: ["^(a+)+$"] }, $ref: "#/dependencies" }, evil)).toBe("valid");
    expect(check({ propertyNames: { pattern: "^(a+)+$" } }, { [evil]: 1 })).toBe("valid");
    expect(performance.now() - started).toBeLessThan(3000);
  });

  it("refuses, without throwing, schemas it cannot use or that recurse forever", () => {
    expect(check({ $ref: "#/nowhere" }, 1)).toContain("cannot be used");
    expect(check({ $defs: { a: { $id: "x" }, b: { $id: "x" } } }, 1)).toContain("cannot be used");
    expect(check({ $ref: "#" }, 1)).toMatch(/too complex|cannot be used/);
  });

  it("bounds the work for a huge payload and lists at most 20 issues", () => {
    const message = check(
      { type: "array", items: { type: "string" } },
      Array.from({ length: 100 }, (_, i) => i),
    );
    expect(message).toContain("and 80 more issues");
    const huge = Array.from({ length: 1_000_000 }, () => 0);
    expect(check({ type: "array", items: { type: "number" } }, huge)).toContain("too complex");
  });
});
