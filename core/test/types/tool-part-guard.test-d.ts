import {
  isPaiToolPart,
  isToolPart,
  type PaiDynamicToolPart,
  type PaiToolPart,
  type PaiUIMessage,
  type ToolName,
  type ToolPartName,
} from "@pai/core";
import type { ProjectedPart } from "@pai/core/protocol";
import type { ToolUIPart, UIDataTypes, UIMessage } from "ai";
import { describe, expectTypeOf, test } from "vitest";
import type { exampleAgent } from "../fixtures/spec-examples.js";

type Part = PaiUIMessage<typeof exampleAgent>["parts"][number];
type ApprovalPart = Extract<PaiToolPart<typeof exampleAgent>, { type: "tool-requestApproval" }>;
declare const parts: Part[];

describe("isToolPart(part, name)", () => {
  test("narrows a message part to the union's own parts of that tool", () => {
    for (const part of parts) {
      if (isToolPart(part, "requestApproval")) {
        expectTypeOf(part).toEqualTypeOf<ApprovalPart>();
        expectTypeOf(part.type).toEqualTypeOf<"tool-requestApproval">();
        expectTypeOf(part.toolCallId).toEqualTypeOf<string>();
      }
    }
  });

  test("then state narrows to typed input, output, data and suspensions", () => {
    for (const part of parts) {
      if (isToolPart(part, "requestApproval") && part.state === "output-available") {
        expectTypeOf(part.input).toEqualTypeOf<{ summary: string }>();
        expectTypeOf(part.output).toEqualTypeOf<{ approved: boolean; comment?: string | undefined }>();
        const pending = part.pendingSuspension;
        if (pending) expectTypeOf(pending.input).toEqualTypeOf<{ prompt: string }>();
      }
      if (isToolPart(part, "deployService")) {
        expectTypeOf(part.data.progress?.at(-1)?.value).toEqualTypeOf<
          { step: string; status: "running" | "done" } | undefined
        >();
      }
    }
  });

  test("the false branch keeps every other part", () => {
    for (const part of parts) {
      if (!isToolPart(part, "requestApproval")) {
        expectTypeOf(part).toEqualTypeOf<Exclude<Part, ApprovalPart>>();
      }
    }
  });

  test("names outside the contract do not compile; dynamic-tool parts are not named", () => {
    const part = parts[0];
    // @ts-expect-error not a tool of the agent
    isToolPart(part, "nope");
    // @ts-expect-error `dynamic-tool` is a part type, not a tool name
    isToolPart(part, "dynamic-tool");
    expectTypeOf<ToolPartName<Part>>().toEqualTypeOf<ToolName<typeof exampleAgent>>();
  });

  test("works in array callbacks through inferred predicates", () => {
    const approvals = parts.filter((part) => isToolPart(part, "requestApproval"));
    expectTypeOf(approvals).toEqualTypeOf<ApprovalPart[]>();
  });

  test("contract-erased parts accept any name", () => {
    const part = {} as ProjectedPart;
    if (isToolPart(part, "anything")) {
      expectTypeOf(part.type).toEqualTypeOf<"tool-anything">();
      expectTypeOf(part.toolCallId).toEqualTypeOf<string>();
      expectTypeOf(part.suspensions).toExtend<readonly unknown[]>();
    }
    const loose = { type: "tool-x", toolCallId: "c1" } as { type: string; toolCallId: string };
    if (isToolPart(loose, "x")) expectTypeOf(loose.type).toEqualTypeOf<"tool-x">();
    const value: unknown = loose;
    if (isToolPart(value, "x")) expectTypeOf(value.toolCallId).toEqualTypeOf<string>();
  });

  test("plain AI SDK UI messages narrow the same way", () => {
    type Tools = { weather: { input: { city: string }; output: { celsius: number } } };
    const part = {} as UIMessage<unknown, UIDataTypes, Tools>["parts"][number];
    if (isToolPart(part, "weather")) {
      expectTypeOf(part).toEqualTypeOf<ToolUIPart<Tools>>();
      if (part.state === "output-available") expectTypeOf(part.output).toEqualTypeOf<{ celsius: number }>();
    }
  });
});

describe("isToolPart(part)", () => {
  test("narrows to every tool part, static and dynamic", () => {
    for (const part of parts) {
      if (isToolPart(part)) {
        expectTypeOf(part).toEqualTypeOf<PaiToolPart<typeof exampleAgent>>();
        if (part.type === "dynamic-tool") expectTypeOf(part).toEqualTypeOf<PaiDynamicToolPart>();
      }
    }
  });

  test("narrows an unknown value to the native tool part shape", () => {
    const value: unknown = null;
    if (isToolPart(value)) {
      expectTypeOf(value.toolCallId).toEqualTypeOf<string>();
      expectTypeOf(value.type).toEqualTypeOf<`tool-${string}` | "dynamic-tool">();
    }
  });
});

describe("isPaiToolPart (deprecated)", () => {
  test("as an array callback it still narrows the element type", () => {
    expectTypeOf(parts.filter(isPaiToolPart)).toEqualTypeOf<PaiToolPart<typeof exampleAgent>[]>();
    expectTypeOf(parts.find(isPaiToolPart)).toEqualTypeOf<PaiToolPart<typeof exampleAgent> | undefined>();
  });
});
