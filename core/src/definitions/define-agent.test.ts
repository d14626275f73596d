import { describe, expect, it } from "vitest";
import { z } from "zod";
import { PaiError } from "../errors/pai-error.js";
import { defineAgent } from "./define-agent.js";
import { defineTool } from "./define-tool.js";

const lookup = defineTool({
  id: "test.lookup",
  description: "Lookup",
  inputSchema: z.object({ id: z.string() }),
  contextSchema: z.object({ tenant: z.string() }),
  execute: ({ input, context }) => `${context.tenant}/${input.id}`,
});
const plain = defineTool({
  id: "test.plain",
  description: "Plain",
  inputSchema: z.object({}),
  execute: () => 1,
});

const loose = defineAgent as (config: Record<string, unknown>) => unknown;

function definitionError(fn: () => unknown): string {
  try {
    fn();
  } catch (error) {
    expect(PaiError.isInstance(error)).toBe(true);
    expect((error as PaiError).code).toBe("INVALID_DEFINITION");
    return (error as PaiError).message;
  }
  throw new Error("expected defineAgent to throw");
}

describe("defineAgent", () => {
  it("normalizes bare definitions to { tool } and keeps registration options", () => {
    const enabled = () => true;
    const onOutput = () => {};
    const mapContext = () => ({ tenant: "t" });
    const agent = defineAgent({
      name: "support",
      runtimeContext: async () => ({ tenant: "acme" }),
      tools: {
        plain,
        lookup: { tool: lookup, enabled, mapContext, onOutput },
        off: { tool: plain, enabled: false },
      },
      maxSteps: 4,
      instructions: "Be brief.",
    });
    expect(Object.isFrozen(agent)).toBe(true);
    expect(Object.isFrozen(agent.tools)).toBe(true);
    expect(agent.kind).toBe("agent");
    expect(agent.name).toBe("support");
    expect(agent.tools.plain).toEqual({ tool: plain });
    expect(agent.tools.lookup).toEqual({ tool: lookup, enabled, mapContext, onOutput });
    expect(agent.tools.off).toEqual({ tool: plain, enabled: false });
    expect(agent.maxSteps).toBe(4);
    expect(agent.instructions).toBe("Be brief.");
    expect(Object.keys(agent).sort()).toEqual([
      "instructions",
      "kind",
      "maxSteps",
      "name",
      "runtimeContext",
      "tools",
    ]);
  });

  it("accepts an agent without tools", () => {
    expect(defineAgent({}).tools).toEqual({});
  });

  it("rejects a registration that is not a tool definition", () => {
    expect(definitionError(() => loose({ tools: { broken: { enabled: true } } }))).toBe(
      'defineAgent: registration "broken" is not a tool definition. Pass a defineTool() result or { tool: definition, ... }.',
    );
  });

  it("rejects an empty registration name", () => {
    expect(definitionError(() => loose({ name: "a", tools: { "": plain } }))).toContain(
      'defineAgent("a"): a tool registration name is empty',
    );
  });

  it("rejects malformed registration options", () => {
    expect(definitionError(() => loose({ tools: { plain: { tool: plain, enabled: "yes" } } }))).toContain(
      'registration "plain" has an enabled value that is neither a boolean nor a function',
    );
    expect(definitionError(() => loose({ tools: { plain: { tool: plain, onOutput: 1 } } }))).toContain(
      'registration "plain" has a onOutput that is not a function',
    );
  });

  it("rejects a context tool registered without runtimeContext or mapContext", () => {
    expect(definitionError(() => loose({ tools: { lookup } }))).toBe(
      'defineAgent: tool "lookup" (id "test.lookup") declares a contextSchema, but the agent has no runtimeContext. Add a runtimeContext resolver, or register the tool as { tool, mapContext }.',
    );
    expect(() =>
      defineAgent({ tools: { lookup: { tool: lookup, mapContext: () => ({ tenant: "t" }) } } }),
    ).not.toThrow();
  });

  it("rejects invalid maxSteps", () => {
    expect(definitionError(() => loose({ maxSteps: 0 }))).toContain(
      "maxSteps must be a positive integer (got 0)",
    );
  });
});
