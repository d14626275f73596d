import {
  type BoundChildTool,
  defineAgent,
  defineTool,
  type RawToolSchemaInput,
  type ToolFailureDetails,
  type ToolInputOf,
  toolFailureDetails,
} from "@pai/core";
import { jsonSchema } from "ai";
import { describe, expectTypeOf, test } from "vitest";
import { z } from "zod";

type ParsedParseInput = { value: number; limit: number; note?: string | undefined };

const parse = defineTool({
  id: "types.tool-input-of.parse.v1",
  description: "Parse a number",
  inputSchema: z.object({
    value: z.string().transform(Number),
    limit: z.number().default(10),
    note: z.string().optional(),
  }),
  outputSchema: z.object({ doubled: z.number() }),
  execute: ({ input }) => {
    // What the implementation sees is the parsed input ToolInputOf describes.
    expectTypeOf(input).toEqualTypeOf<ParsedParseInput>();
    return { doubled: input.value * 2 };
  },
});

describe("ToolInputOf", () => {
  test("describes the parsed input (after transforms and defaults), not the raw input", () => {
    expectTypeOf<ToolInputOf<typeof parse>>().toEqualTypeOf<ParsedParseInput>();
    expectTypeOf<ToolInputOf<typeof parse>["value"]>().toEqualTypeOf<number>();
    expectTypeOf<ToolInputOf<typeof parse>["limit"]>().toEqualTypeOf<number>();
    expectTypeOf<ToolInputOf<typeof parse>>().not.toEqualTypeOf<
      RawToolSchemaInput<typeof parse.config.inputSchema>
    >();
  });

  test("differs from the raw input a child's execute accepts", () => {
    type ChildExecuteInput = Parameters<BoundChildTool<typeof parse>["execute"]>[0];
    expectTypeOf<ChildExecuteInput["value"]>().toEqualTypeOf<string>();
    expectTypeOf<ToolInputOf<typeof parse>["value"]>().toEqualTypeOf<number>();
    expectTypeOf<{ value: "21" }>().toExtend<ChildExecuteInput>();
    expectTypeOf<{ value: "21" }>().not.toExtend<ToolInputOf<typeof parse>>();
  });

  test("is the input lifecycle observers see", () => {
    defineAgent({
      tools: {
        parse: {
          tool: parse,
          onOutput: ({ input }) => {
            expectTypeOf(input).toEqualTypeOf<ToolInputOf<typeof parse>>();
          },
        },
      },
    });
  });

  test("follows JSON-schema input schemas and is unknown for a non-definition", () => {
    const search = defineTool({
      id: "types.tool-input-of.search.v1",
      description: "Search",
      inputSchema: jsonSchema<{ query: string; page?: number }>({ type: "object" }),
      execute: () => null,
    });
    expectTypeOf<ToolInputOf<typeof search>>().toEqualTypeOf<{ query: string; page?: number }>();
    expectTypeOf<ToolInputOf<{ notATool: true }>>().toEqualTypeOf<unknown>();
  });
});

describe("toModelOutput", () => {
  test("receives toolCallId with the typed input and output, and may return a promise", () => {
    defineTool({
      id: "types.tool-input-of.converter.v1",
      description: "Converted",
      inputSchema: z.object({ q: z.string().transform((value) => value.length) }),
      outputSchema: z.object({ text: z.string() }),
      execute: ({ input }) => ({ text: String(input.q) }),
      toModelOutput: async ({ toolCallId, input, output }) => {
        expectTypeOf(toolCallId).toEqualTypeOf<string>();
        expectTypeOf(input).toEqualTypeOf<{ q: number }>();
        expectTypeOf(output).toEqualTypeOf<{ text: string }>();
        return { type: "text", value: `${toolCallId}: ${output.text}` };
      },
    });
  });

  test("a converter must return an SDK tool result output", () => {
    defineTool({
      id: "types.tool-input-of.bad-converter.v1",
      description: "Converted",
      inputSchema: z.object({}),
      outputSchema: z.object({ text: z.string() }),
      execute: () => ({ text: "x" }),
      // @ts-expect-error not a model output shape
      toModelOutput: async ({ output }) => ({ kind: "text", text: output.text }),
    });
  });
});

describe("defineTool description", () => {
  test("must be a string or a synchronous function", () => {
    defineTool({
      id: "types.tool-input-of.bad-description.v1",
      // @ts-expect-error a number is not a description
      description: 42,
      inputSchema: z.object({}),
    });
    defineTool({
      id: "types.tool-input-of.async-description.v1",
      // @ts-expect-error a description callback is synchronous
      description: async () => "Later",
      inputSchema: z.object({}),
    });
  });
});

describe("toolFailureDetails", () => {
  test("maps a ToolFailure string to the { code: 'tool_failed', message } record", () => {
    expectTypeOf(toolFailureDetails).parameter(0).toEqualTypeOf<string>();
    expectTypeOf(toolFailureDetails("x")).toEqualTypeOf<ToolFailureDetails>();
    expectTypeOf<ToolFailureDetails>().toEqualTypeOf<{ code: "tool_failed"; message: string }>();
  });
});
