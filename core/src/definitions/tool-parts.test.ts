import { describe, expect, it } from "vitest";
import { PaiError } from "../errors/pai-error.js";
import { getToolName, isPaiToolPart } from "../parts/get-tool-name.js";

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
    expect(() => getToolName({ type: "dynamic-tool" })).toThrow("isPaiToolPart");
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
