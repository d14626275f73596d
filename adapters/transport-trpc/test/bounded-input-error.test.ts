import { PaiError } from "@pai/core";
import { TRPCError } from "@trpc/server";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { boundedInputError } from "../src/bounded-input-error.js";

// What a client reads when its input fails the router's schema: one sentence, bounded however
// many issues the input produced, with the issues themselves in the error's data.

const schemaError = (schema: z.ZodType, value: unknown) => {
  const parsed = schema.safeParse(value);
  if (parsed.success) throw new Error("expected the value to fail");
  return new TRPCError({ code: "BAD_REQUEST", cause: parsed.error });
};

describe("boundedInputError", () => {
  it("turns a schema's issues into one sentence naming each path", () => {
    const error = boundedInputError(
      schemaError(z.object({ threadId: z.string().max(3), limit: z.number() }), {
        threadId: "abcd",
        limit: "x",
      }),
    );
    expect(error.message).toBe(
      "Invalid input: threadId: Too big: expected string to have <=3 characters; limit: Invalid input: expected number, received string",
    );
    expect(PaiError.isInstance(error.cause) && error.cause.issues).toEqual([
      { message: "Too big: expected string to have <=3 characters", path: ["threadId"] },
      { message: "Invalid input: expected number, received string", path: ["limit"] },
    ]);
  });

  it("keeps ten of 100,000 issues, and says how many there were", () => {
    const keys = Object.fromEntries(Array.from({ length: 100_000 }, (_, index) => [`k${index}`, 1]));
    const error = boundedInputError(schemaError(z.record(z.string(), z.string()), keys));
    expect(error.message.startsWith("Invalid input (100000 problems, first 10 shown): k0: ")).toBe(true);
    expect(error.message.length).toBeLessThanOrEqual(2_000);
    expect(PaiError.isInstance(error.cause) && error.cause.issues).toHaveLength(10);
  });

  it("reports a union's issues from the branch the value was meant for", () => {
    const schema = z.object({
      message: z.union([z.string(), z.object({ text: z.string(), id: z.string() })]),
    });
    expect(boundedInputError(schemaError(schema, { message: { text: 1, id: "m" } })).message).toBe(
      "Invalid input: message.text: Invalid input: expected string, received number",
    );
    expect(boundedInputError(schemaError(schema, { message: 7 })).message).toBe(
      "Invalid input: message: Invalid input: expected string or object",
    );
  });

  it("stays bounded for unions nested in unions, each with many issues", () => {
    // Each level reuses the one below (small in memory); walked without a budget it is 300^6 issues.
    let level: unknown[] = Array.from({ length: 300 }, () => ({
      code: "custom",
      path: ["x"],
      message: "no",
    }));
    for (let depth = 0; depth < 5; depth++) {
      const below = level;
      level = Array.from({ length: 300 }, () => ({
        code: "invalid_union",
        path: ["u"],
        message: "Invalid input",
        errors: [below, below],
      }));
    }
    const started = performance.now();
    const error = boundedInputError(
      new TRPCError({ code: "BAD_REQUEST", cause: { issues: level } as never }),
    );
    expect(performance.now() - started).toBeLessThan(1_000);
    expect(error.message.length).toBeLessThanOrEqual(2_000);
    expect(error.message.startsWith("Invalid input (300 problems, first 10 shown): u.u.u.u.u.x: no")).toBe(
      true,
    );
  });

  it("leaves PAI's own input errors and other short messages as they are", () => {
    const own = new TRPCError({
      code: "BAD_REQUEST",
      message: "The resume payload does not match: expected { approved: boolean }",
      cause: new PaiError(
        "INVALID_INPUT",
        "The resume payload does not match: expected { approved: boolean }",
        {
          issues: [{ message: "Expected boolean", path: ["approved"] }],
        },
      ),
    });
    expect(boundedInputError(own)).toBe(own);
    const unparsable = new TRPCError({ code: "BAD_REQUEST", message: "Unexpected token } in JSON" });
    expect(boundedInputError(unparsable)).toBe(unparsable);
  });
});
