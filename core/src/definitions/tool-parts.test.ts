import { describe, expect, it } from "vitest";
import { PaiError } from "../errors/pai-error.js";
import { getToolName, isPaiToolPart } from "../parts/get-tool-name.js";
import { isToolPart } from "../parts/is-tool-part.js";

describe("getToolName", () => {
  it("reads static tool-<name> parts", () => {
    expect(getToolName({ type: "tool-requestApproval" })).toBe("requestApproval");
    expect(getToolName({ type: "tool-crm.lookup-v1" })).toBe("crm.lookup-v1");
  });

  it("reads dynamic-tool parts from toolName", () => {
    expect(getToolName({ type: "dynamic-tool", toolName: "client.getSelectedText" })).toBe(
      "client.getSelectedText",
    );
  });

  it("works for names no longer registered (defensive discriminant)", () => {
    expect(getToolName({ type: "tool-removedTool" })).toBe("removedTool");
  });

  it("throws a PaiError for non-tool parts", () => {
    expect(() => getToolName({ type: "text" })).toThrow(PaiError);
    expect(() => getToolName({ type: "tool-" })).toThrow('part of type "tool-" is not a tool part');
    expect(() => getToolName({ type: "dynamic-tool" })).toThrow("isToolPart(part)");
  });
});

describe("isPaiToolPart", () => {
  it("accepts native static and dynamic tool parts", () => {
    expect(isPaiToolPart({ type: "tool-x", toolCallId: "c1", state: "input-available", input: {} })).toBe(
      true,
    );
    expect(
      isPaiToolPart({ type: "dynamic-tool", toolName: "y", toolCallId: "c2", state: "output-available" }),
    ).toBe(true);
  });

  it("rejects other parts and malformed tool parts", () => {
    for (const part of [
      { type: "text", text: "hi" },
      { type: "step-start" },
      { type: "tool-x" },
      { type: "dynamic-tool", toolCallId: "c" },
      { type: "tool-", toolCallId: "c" },
      null,
      "tool-x",
    ]) {
      expect(isPaiToolPart(part)).toBe(false);
    }
  });
});

describe("isToolPart", () => {
  // Loosely typed, as parts parsed from JSON are: any tool name type-checks.
  type LoosePart = { type: string; [key: string]: unknown };
  const deploy: LoosePart = { type: "tool-deploy", toolCallId: "c1", state: "input-available", input: {} };
  const dynamic: LoosePart = {
    type: "dynamic-tool",
    toolName: "deploy",
    toolCallId: "c2",
    state: "input-available",
  };

  it("with a name, accepts only that tool's tool-<name> parts", () => {
    expect(isToolPart(deploy, "deploy")).toBe(true);
    expect(isToolPart(deploy, "dep")).toBe(false);
    expect(isToolPart({ ...deploy, type: "tool-deployment" } as LoosePart, "deploy")).toBe(false);
    expect(isToolPart({ type: "tool-crm.lookup-v1", toolCallId: "c3" }, "crm.lookup-v1")).toBe(true);
  });

  it("with a name, never accepts dynamic-tool parts, even of a tool of that name", () => {
    expect(isToolPart(dynamic, "deploy")).toBe(false);
    expect(isToolPart(dynamic, "dynamic-tool" as never)).toBe(false);
  });

  it("without a name, accepts every native tool part, as isPaiToolPart does", () => {
    expect(isToolPart(deploy)).toBe(true);
    expect(isToolPart(dynamic)).toBe(true);
    expect(isPaiToolPart(dynamic)).toBe(true);
  });

  it("rejects other parts, malformed tool parts and non-objects", () => {
    for (const part of [
      { type: "text", text: "tool-deploy" },
      { type: "tool-deploy" },
      { type: "tool-deploy", toolCallId: 1 },
      { type: "dynamic-tool", toolCallId: "c" },
      { type: "tool-", toolCallId: "c" },
      null,
      undefined,
      "tool-deploy",
    ]) {
      expect(isToolPart(part)).toBe(false);
      expect(isToolPart(part, "deploy")).toBe(false);
    }
    expect(isToolPart({ type: "tool-", toolCallId: "c" }, "" as never)).toBe(false);
  });
});
