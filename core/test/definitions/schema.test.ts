import { jsonSchema } from "ai";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { sdkSchemaOf, toJsonSchema, validateSchema } from "../../src/definitions/schema.js";

describe("validateSchema", () => {
  const schema = z.object({
    a: z.number(),
    b: z.number().default(2),
    tag: z.string().transform((s) => s.trim()),
  });

  it("parses with defaults and transforms, and stays correct when the same schema is reused", async () => {
    for (let index = 0; index < 3; index++) {
      expect(await validateSchema(schema, { a: index, tag: " x " })).toEqual({
        success: true,
        value: { a: index, b: 2, tag: "x" },
      });
    }
  });

  it("reports issues with paths for invalid values after a valid one", async () => {
    await validateSchema(schema, { a: 1, tag: "ok" });
    const result = await validateSchema(schema, { a: "one", tag: "ok" });
    expect(result.success).toBe(false);
    if (result.success) return;
    expect(result.issues).toHaveLength(1);
    expect(result.issues[0]!.path).toEqual(["a"]);
    expect(result.message).toMatch(/^a: /);
  });

  it("accepts AI SDK JSON schemas without a validator", async () => {
    const open = jsonSchema<{ x: number }>({ type: "object" });
    expect(await validateSchema(open, { anything: true })).toEqual({
      success: true,
      value: { anything: true },
    });
  });
});

describe("sdkSchemaOf", () => {
  it("makes one AI SDK wrapper per schema object", () => {
    const first = z.string();
    const second = z.string();
    expect(sdkSchemaOf(first)).toBe(sdkSchemaOf(first));
    expect(sdkSchemaOf(first)).not.toBe(sdkSchemaOf(second));
  });

  it("leaves toJsonSchema handing out a fresh JSON Schema per call", async () => {
    const schema = z.object({ a: z.number() });
    const first = await toJsonSchema(schema);
    (first as { mutated?: boolean }).mutated = true;
    expect(await toJsonSchema(schema)).not.toHaveProperty("mutated");
  });
});
