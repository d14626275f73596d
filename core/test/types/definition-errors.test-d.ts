import { defineAgent, defineTool } from "@pai/core";
import { describe, expectTypeOf, test } from "vitest";
import { z } from "zod";

// The errors below must also name their fix; scripts/test/type-errors.test.ts asserts on their text.

const deploy = defineTool({
  id: "test.errors.deploy",
  description: "Deploy",
  contextSchema: z.object({ orgId: z.string() }),
  inputSchema: z.object({ env: z.string() }),
  outputSchema: z.object({ ok: z.boolean() }),
  suspend: {
    approve: {
      suspendSchema: z.object({ prompt: z.string() }),
      resumeSchema: z.object({ approved: z.boolean() }),
    },
    confirm: { suspendSchema: z.object({ note: z.string() }), resumeSchema: z.object({ ok: z.boolean() }) },
  },
  execute: async (ctx) => {
    if (ctx.entry.type === "initial") return ctx.suspend("approve", { prompt: ctx.context.orgId });
    return { ok: true };
  },
});

describe("suspend point names", () => {
  test("ctx.suspend accepts exactly the tool's suspend point names", () => {
    defineTool({
      id: "test.errors.suspend",
      description: "Suspend",
      inputSchema: z.object({}),
      outputSchema: z.object({ ok: z.boolean() }),
      suspend: {
        approve: { suspendSchema: z.object({ prompt: z.string() }), resumeSchema: z.object({}) },
        confirm: { suspendSchema: z.object({ note: z.string() }), resumeSchema: z.object({}) },
      },
      execute: async (ctx) => {
        type Name = Parameters<typeof ctx.suspend>[0];
        expectTypeOf<Name>().toEqualTypeOf<"approve" | "confirm">();
        if (ctx.entry.type === "resume") return { ok: true };
        return ctx.suspend(
          // @ts-expect-error not a suspend point of this tool (the error lists "approve" | "confirm")
          "aprove",
          { prompt: "x" },
        );
      },
    });
  });
});

describe("tool context at the agent boundary", () => {
  test("a runtime context missing a field the tool needs requires mapContext", () => {
    defineAgent({
      runtimeContext: async ({ scope }) => ({ userId: scope.scopeKey }),
      tools: {
        // @ts-expect-error deploy needs context field 'orgId', which the runtimeContext lacks
        deploy,
      },
    });
    defineAgent({
      runtimeContext: async ({ scope }) => ({ userId: scope.scopeKey }),
      tools: {
        deploy: { tool: deploy, mapContext: ({ runtimeContext }) => ({ orgId: runtimeContext.userId }) },
      },
    });
  });

  test("an agent without runtimeContext cannot register a tool that needs context", () => {
    defineAgent({
      tools: {
        // @ts-expect-error deploy needs context field 'orgId', but the agent has no runtimeContext
        deploy,
      },
    });
    defineAgent({
      instructions: ({ runtimeContext }) => String(runtimeContext),
      tools: {
        // @ts-expect-error also when other members are context-sensitive callbacks
        deploy: { tool: deploy, enabled: true },
      },
    });
    // mapContext answers it: the resolver sees the agent's (absent) runtime context.
    defineAgent({
      tools: {
        deploy: {
          tool: deploy,
          mapContext: ({ runtimeContext }) => {
            expectTypeOf(runtimeContext).toEqualTypeOf<undefined>();
            return { orgId: "org" };
          },
        },
      },
    });
  });

  test("without runtimeContext, only a tool's own contextSchema is enforced (as at run time)", () => {
    const optional = defineTool({
      id: "test.errors.optional",
      description: "Optional context",
      contextSchema: z.object({ orgId: z.string() }).optional(),
      inputSchema: z.object({}),
      execute: async () => null,
    });
    const child = defineTool({
      id: "test.errors.child",
      description: "Child",
      contextSchema: z.object({ label: z.string() }),
      inputSchema: z.object({}),
      execute: async () => null,
    });
    // No contextSchema of its own: its context is the one its children declare.
    const parent = defineTool({
      id: "test.errors.parent",
      description: "Parent",
      inputSchema: z.object({}),
      tools: { child: { tool: child, mapContext: () => ({ label: "x" }) } },
      execute: async () => null,
    });
    defineAgent({ tools: { optional, parent } });
  });

  test("a config with unknown keys is still rejected", () => {
    // @ts-expect-error excess property checks stay on
    defineAgent({ nmae: "typo" });
  });
});
