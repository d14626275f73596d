import { describe, expect, it } from "vitest";
import { z } from "zod";
import { defineCapability } from "../capabilities/capability.js";
import { PaiError } from "../errors/pai-error.js";
import { defineTool } from "./define-tool.js";
import {
  createFailResult,
  createSuspendResult,
  isFailResult,
  isSuspendResult,
  TOOL_RESULT_KIND,
} from "./tool-results.js";

const input = z.object({});
const child = defineTool({ id: "test.child", description: "child", inputSchema: input, execute: () => 1 });

/** Runs `fn`, asserts it throws an INVALID_DEFINITION PaiError, and returns the message. */
function definitionError(fn: () => unknown): string {
  try {
    fn();
  } catch (error) {
    expect(PaiError.isInstance(error)).toBe(true);
    expect((error as PaiError).code).toBe("INVALID_DEFINITION");
    return (error as PaiError).message;
  }
  throw new Error("expected defineTool to throw");
}

// Runtime-only misuse: these configs are rejected by the types too, so they are cast.
const loose = defineTool as (config: Record<string, unknown>) => unknown;

describe("defineTool construction-time errors", () => {
  it("rejects an empty id and names the fix", () => {
    const message = definitionError(() => loose({ id: "", description: "x", inputSchema: input }));
    expect(message).toContain('a tool id must be a non-empty string (got "")');
    expect(message).toContain('"app.lookup-customer.v1"');
  });

  it("rejects a whitespace-only id", () => {
    expect(definitionError(() => loose({ id: "   ", description: "x", inputSchema: input }))).toContain(
      "non-empty string",
    );
  });

  it("rejects an id with surrounding whitespace and shows the trimmed id", () => {
    const message = definitionError(() =>
      loose({ id: " crm.lookup ", description: "x", inputSchema: input }),
    );
    expect(message).toBe(
      'defineTool: tool id " crm.lookup " has leading or trailing whitespace. Remove it: ids are compared exactly, so write "crm.lookup".',
    );
  });

  it("rejects capabilities without execute", () => {
    const sandbox = defineCapability<{ run(): void }>()({ id: "test.sandbox" });
    const message = definitionError(() =>
      loose({ id: "test.caps", description: "x", inputSchema: input, capabilities: { sandbox } }),
    );
    expect(message).toContain('defineTool("test.caps"): capabilities are declared but there is no execute');
    expect(message).toContain("add an execute or remove capabilities");
  });

  it("allows an empty capabilities map without execute", () => {
    expect(() =>
      loose({ id: "test.caps-empty", description: "x", inputSchema: input, capabilities: {} }),
    ).not.toThrow();
  });

  it("rejects suspend without execute", () => {
    const message = definitionError(() =>
      loose({
        id: "test.suspend",
        description: "x",
        inputSchema: input,
        suspend: { approval: { suspendSchema: input, resumeSchema: input } },
      }),
    );
    expect(message).toContain(
      'defineTool("test.suspend"): suspend points are declared but there is no execute',
    );
    expect(message).toContain("remove suspend");
  });

  it("rejects a child without execute", () => {
    const clientTool = defineTool({ id: "test.client", description: "x", inputSchema: input });
    const message = definitionError(() =>
      defineTool({
        id: "test.parent",
        description: "x",
        inputSchema: input,
        tools: { clientTool },
        execute: () => 1,
      }),
    );
    expect(message).toContain(
      'defineTool("test.parent"): child tool "clientTool" (id "test.client") has no execute',
    );
    expect(message).toContain("register it on the agent instead");
  });

  it("rejects a child that declares suspend points", () => {
    const waiting = defineTool({
      id: "test.waiting",
      description: "x",
      inputSchema: input,
      suspend: { ask: { suspendSchema: input, resumeSchema: input } },
      execute: (ctx) => ctx.suspend("ask", {}),
    });
    const message = definitionError(() =>
      defineTool({
        id: "test.parent",
        description: "x",
        inputSchema: input,
        tools: { waiting },
        execute: () => 1,
      }),
    );
    expect(message).toContain('child tool "waiting" (id "test.waiting") declares suspend points');
  });

  it("rejects a child that declares dataSchemas", () => {
    const reporting = defineTool({
      id: "test.reporting",
      description: "x",
      inputSchema: input,
      dataSchemas: { progress: z.number() },
      execute: () => 1,
    });
    const message = definitionError(() =>
      defineTool({
        id: "test.parent",
        description: "x",
        inputSchema: input,
        tools: { reporting: { tool: reporting } },
        execute: () => 1,
      }),
    );
    expect(message).toContain('child tool "reporting" (id "test.reporting") declares dataSchemas');
  });

  it("rejects a child that declares its own tools", () => {
    const nested = defineTool({
      id: "test.nested",
      description: "x",
      inputSchema: input,
      tools: { child },
      execute: () => 1,
    });
    const message = definitionError(() =>
      defineTool({
        id: "test.parent",
        description: "x",
        inputSchema: input,
        tools: { nested },
        execute: () => 1,
      }),
    );
    expect(message).toContain(
      'child tool "nested" (id "test.nested") declares its own tools. Nesting is one level deep',
    );
  });

  it("rejects a child registration that is not a definition", () => {
    const message = definitionError(() =>
      loose({
        id: "test.parent",
        description: "x",
        inputSchema: input,
        tools: { bad: { name: "x" } },
        execute: () => 1,
      }),
    );
    expect(message).toContain('registration "bad" is not a tool definition');
  });

  it("rejects a missing inputSchema and a non-function execute", () => {
    expect(definitionError(() => loose({ id: "test.no-input", description: "x" }))).toContain(
      "inputSchema is required",
    );
    expect(
      definitionError(() => loose({ id: "test.exec", description: "x", inputSchema: input, execute: "run" })),
    ).toContain("execute must be a function");
  });
});

describe("defineTool runtime shape", () => {
  it("returns a frozen definition with the documented fields", () => {
    const sandbox = defineCapability<{ run(): void }>()({ id: "test.sandbox" });
    const execute = () => ({ ok: true });
    const tool = defineTool({
      id: "test.shape",
      description: "Shape",
      inputSchema: input,
      outputSchema: z.object({ ok: z.boolean() }),
      dataSchemas: { progress: z.number() },
      capabilities: { box: sandbox },
      tools: { child, other: { tool: child, enabled: false } },
      execute,
    });
    expect(Object.isFrozen(tool)).toBe(true);
    expect(Object.isFrozen(tool.config)).toBe(true);
    expect(tool.kind).toBe("tool");
    expect(tool.id).toBe("test.shape");
    expect(tool.contract).toEqual({});
    expect(tool.context).toBeUndefined();
    expect(Object.keys(tool.config).sort()).toEqual([
      "dataSchemas",
      "description",
      "inputSchema",
      "outputSchema",
    ]);
    expect(tool.capabilities).toEqual({ box: sandbox });
    expect(tool.tools).toEqual({ child: { tool: child }, other: { tool: child, enabled: false } });
    expect(tool.execute).toBe(execute);
    expect("execute" in tool.config).toBe(false);
    expect("capabilities" in tool.config).toBe(false);
  });

  it("omits execute and tools when absent and defaults capabilities to {}", () => {
    const tool = defineTool({ id: "test.client-shape", description: "x", inputSchema: input });
    expect(tool.capabilities).toEqual({});
    expect("execute" in tool).toBe(false);
    expect("tools" in tool).toBe(false);
  });
});

describe("tool result markers", () => {
  it("suspend and fail markers are plain objects keyed by the shared symbol", () => {
    const suspended = createSuspendResult("approval", { prompt: "ok?" });
    expect(suspended).toEqual({ [TOOL_RESULT_KIND]: "suspend", name: "approval", input: { prompt: "ok?" } });
    expect(suspended[TOOL_RESULT_KIND]).toBe("suspend");
    expect(TOOL_RESULT_KIND).toBe(Symbol.for("pai.tool-result"));
    expect(isSuspendResult(suspended)).toBe(true);
    expect(isFailResult(suspended)).toBe(false);

    const failed = createFailResult("No such brief. List them first.");
    expect(failed[TOOL_RESULT_KIND]).toBe("fail");
    expect(failed.message).toBe("No such brief. List them first.");
    expect(isFailResult(failed)).toBe(true);
    expect(isSuspendResult(failed)).toBe(false);
  });

  it("recognizes markers built by another copy of the package", () => {
    expect(isSuspendResult({ [Symbol.for("pai.tool-result")]: "suspend", name: "x", input: 1 })).toBe(true);
    expect(isFailResult({ [Symbol.for("pai.tool-result")]: "fail", message: "m" })).toBe(true);
  });

  it("ordinary outputs are not markers", () => {
    for (const value of [null, undefined, "suspend", { name: "x" }, { message: "m" }, [], 0]) {
      expect(isSuspendResult(value)).toBe(false);
      expect(isFailResult(value)).toBe(false);
    }
  });
});
