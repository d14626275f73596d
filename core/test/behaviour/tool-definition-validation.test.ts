import { defineTool, PaiError } from "@pai/core";
import { describe, expect, it } from "vitest";
import { z } from "zod";

/** The PaiError a definition throws; fails the test when it does not throw one. */
function definitionError(define: () => unknown): PaiError {
  try {
    define();
  } catch (error) {
    if (PaiError.isInstance(error)) return error;
    throw error;
  }
  throw new Error("Expected defineTool to throw.");
}

describe("defineTool description validation", () => {
  it.each([
    { label: "a number", description: 42 },
    { label: "undefined", description: undefined },
    { label: "null", description: null },
    { label: "an object", description: { text: "Look something up" } },
    { label: "an array", description: ["Look", "up"] },
    { label: "a boolean", description: true },
  ])("rejects a description that is $label with INVALID_DEFINITION", ({ description }) => {
    const error = definitionError(() =>
      defineTool({
        id: "test.definition.bad-description.v1",
        description: description as never,
        inputSchema: z.object({}),
        execute: () => null,
      }),
    );
    expect(error.code).toBe("INVALID_DEFINITION");
    expect(error.message).toContain("description must be a string or a synchronous function");
    expect(error.message).toContain("test.definition.bad-description.v1");
  });

  it("rejects a bad description on a tool without execute too", () => {
    const error = definitionError(() =>
      defineTool({ id: "test.definition.bad-client.v1", description: 7 as never, inputSchema: z.object({}) }),
    );
    expect(error.code).toBe("INVALID_DEFINITION");
  });

  it("accepts a string or a function description and keeps it on the definition", () => {
    const dynamicText = () => "Dynamic";
    const fixed = defineTool({
      id: "test.definition.string-description.v1",
      description: "Fixed",
      inputSchema: z.object({}),
    });
    const dynamic = defineTool({
      id: "test.definition.function-description.v1",
      description: dynamicText,
      inputSchema: z.object({}),
    });
    expect(fixed.config.description).toBe("Fixed");
    expect(dynamic.config.description).toBe(dynamicText);
  });
});
