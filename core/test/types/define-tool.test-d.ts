import {
  type ActionDeadline,
  type BoundChildTool,
  type DeadlineInput,
  defineCapability,
  defineTool,
  type Identity,
  type InferToolContext,
  type InferToolContract,
  type ParsedToolSchema,
  type RawToolSchemaInput,
  type SuspendOptions,
  type ToolConfig,
  type ToolDescriptionMetadata,
  type ToolEntry,
  type ToolExecute,
  type ToolFailResult,
  type ToolIdCheck,
  type ToolResolverArgs,
  type ToolSuspendResult,
} from "@pai/core";
import type { jsonSchema, ToolSet } from "ai";
import { describe, expectTypeOf, test } from "vitest";
import { z } from "zod";
import {
  type collectReportDetails,
  draftReport,
  formatPrice,
  getSelectedText,
  guardedTotal,
  regionalTotal,
  requestApproval,
  runScript,
  searchDocs,
} from "../fixtures/spec-examples.js";

describe("tool ids", () => {
  test("an inline id is preserved as a literal", () => {
    expectTypeOf(formatPrice.id).toEqualTypeOf<"example.format-price">();
    expectTypeOf(formatPrice.contract.id).toEqualTypeOf<"example.format-price">();
  });

  test("a widened string id fails to compile", () => {
    const id: string = "widened";
    // @ts-expect-error the id must be a string literal
    defineTool({ id, description: "x", inputSchema: z.object({}) });
  });

  test("a union of literal ids fails to compile", () => {
    const id = (Math.random() > 0.5 ? "app.a.v1" : "app.b.v1") as "app.a.v1" | "app.b.v1";
    // @ts-expect-error a tool has one stable id, not a union
    defineTool({ id, description: "x", inputSchema: z.object({}) });
  });

  test("satisfies ToolConfig without as const fails the literal-id check; with as const it compiles", () => {
    const widened = { id: "extracted", description: "x", inputSchema: z.object({}) } satisfies ToolConfig;
    // @ts-expect-error satisfies widens the id to string
    defineTool(widened);
    const preserved = {
      id: "extracted" as const,
      description: "x",
      inputSchema: z.object({}),
    } satisfies ToolConfig;
    expectTypeOf(defineTool(preserved).id).toEqualTypeOf<"extracted">();
  });

  test("an empty literal id fails to compile", () => {
    // @ts-expect-error empty id
    defineTool({ id: "", description: "x", inputSchema: z.object({}) });
  });

  test("each refusal is a type the compiler prints, naming the fix (never `never`)", () => {
    expectTypeOf<
      ToolIdCheck<string>
    >().toEqualTypeOf<'Error: the tool id must be a string literal. Pass the config inline, or write id: "app.tool-name.v1" as const.'>();
    expectTypeOf<ToolIdCheck<"app.a.v1" | "app.b.v1">>().toEqualTypeOf<{
      "Error: the tool id must be one string literal, not a union": "give each tool its own defineTool";
    }>();
    expectTypeOf<ToolIdCheck<"">>().toEqualTypeOf<{
      "Error: the tool id must not be empty": 'write id: "app.tool-name.v1"';
    }>();
    // What the id parameter becomes: none of them collapses to never.
    expectTypeOf<("app.a.v1" | "app.b.v1") & ToolIdCheck<"app.a.v1" | "app.b.v1">>().not.toBeNever();
    expectTypeOf<"" & ToolIdCheck<"">>().not.toBeNever();
    expectTypeOf<ToolIdCheck<"app.a.v1">>().toBeUnknown();
  });
});

describe("contracts", () => {
  test("hasExecute is a literal", () => {
    expectTypeOf(formatPrice.contract.hasExecute).toEqualTypeOf<true>();
    expectTypeOf(getSelectedText.contract.hasExecute).toEqualTypeOf<false>();
    // @ts-expect-error not a plain boolean
    expectTypeOf(getSelectedText.contract.hasExecute).toEqualTypeOf<boolean>();
  });

  test("input and output are the parsed Zod types", () => {
    const tool = defineTool({
      id: "t.parsed",
      description: "x",
      inputSchema: z.object({ n: z.string().transform(Number), flag: z.boolean().default(false) }),
      outputSchema: z.object({ total: z.number() }),
      execute: ({ input }) => ({ total: input.n }),
    });
    expectTypeOf(tool.contract.input).toEqualTypeOf<{ n: number; flag: boolean }>();
    expectTypeOf(tool.contract.output).toEqualTypeOf<{ total: number }>();
    expectTypeOf<RawToolSchemaInput<typeof tool.config.inputSchema>>().toEqualTypeOf<{
      n: string;
      flag?: boolean | undefined;
    }>();
  });

  test("JSON-schema tool schemas infer their declared types", () => {
    expectTypeOf(searchDocs.contract.input).toEqualTypeOf<{ query: string }>();
    expectTypeOf(searchDocs.contract.output).toEqualTypeOf<{ hits: string[] }>();
    expectTypeOf<ParsedToolSchema<ReturnType<typeof jsonSchema<{ a: 1 }>>>>().toEqualTypeOf<{ a: 1 }>();
  });

  test("output is unknown without outputSchema", () => {
    expectTypeOf(runScript.contract.output).toBeUnknown();
  });

  test("suspend contracts are inferred for executing tools and empty without execute", () => {
    expectTypeOf(requestApproval.contract.suspend).toEqualTypeOf<{
      approval: { input: { prompt: string }; resume: { approved: boolean; comment?: string | undefined } };
    }>();
    expectTypeOf(getSelectedText.contract.suspend).toEqualTypeOf<{}>();
  });

  test("data contracts are inferred per channel", () => {
    const tool = defineTool({
      id: "t.data",
      description: "x",
      inputSchema: z.object({}),
      dataSchemas: { progress: z.object({ pct: z.number() }), log: z.string() },
      execute: () => null,
    });
    expectTypeOf(tool.contract.data).toEqualTypeOf<{ progress: { pct: number }; log: string }>();
  });

  test("InferToolContract and InferToolContext follow a spec-shaped config type", () => {
    type Config = {
      id: "cfg.v1";
      description: string;
      inputSchema: z.ZodObject<{ a: z.ZodString }>;
      contextSchema: z.ZodObject<{ tenant: z.ZodString }>;
      execute: ToolExecute<any, any, any, any>;
    };
    expectTypeOf<InferToolContract<Config>["id"]>().toEqualTypeOf<"cfg.v1">();
    expectTypeOf<InferToolContract<Config>["hasExecute"]>().toEqualTypeOf<true>();
    expectTypeOf<InferToolContract<Config>["input"]>().toEqualTypeOf<{ a: string }>();
    expectTypeOf<InferToolContext<Config>>().toEqualTypeOf<{ tenant: string }>();
  });
});

describe("execution context", () => {
  test("ctx.entry narrows by suspend name to the typed resume payload", () => {
    defineTool({
      id: "t.entry",
      description: "x",
      inputSchema: z.object({}),
      suspend: {
        ask: { suspendSchema: z.object({ q: z.string() }), resumeSchema: z.object({ answer: z.string() }) },
        confirm: { suspendSchema: z.object({}), resumeSchema: z.object({ ok: z.boolean() }) },
      },
      execute: (ctx) => {
        if (ctx.entry.type === "resume" && ctx.entry.name === "ask") {
          expectTypeOf(ctx.entry.resume).toEqualTypeOf<{ answer: string }>();
          // @ts-expect-error the ask resume payload has no ok
          ctx.entry.resume.ok;
        }
        if (ctx.entry.type === "resume" && ctx.entry.name === "confirm") {
          expectTypeOf(ctx.entry.resume).toEqualTypeOf<{ ok: boolean }>();
        }
        return null;
      },
    });
    expectTypeOf<ToolEntry<typeof requestApproval.contract>["type"]>().toEqualTypeOf<"initial" | "resume">();
  });

  test("ctx.suspend is typed per point", () => {
    defineTool({
      id: "t.suspend",
      description: "x",
      inputSchema: z.object({}),
      suspend: { ask: { suspendSchema: z.object({ q: z.string() }), resumeSchema: z.object({}) } },
      execute: (ctx) => {
        const result = ctx.suspend("ask", { q: "why?" });
        expectTypeOf(result.name).toEqualTypeOf<"ask">();
        // @ts-expect-error unknown suspend point
        ctx.suspend("other", { q: "x" });
        // @ts-expect-error wrong payload
        ctx.suspend("ask", { q: 1 });
        return result;
      },
    });
  });

  test("ctx.suspend takes a deadline option that overrides the point's typed default", () => {
    defineTool({
      id: "t.suspend-deadline",
      description: "x",
      inputSchema: z.object({}),
      suspend: {
        ask: {
          suspendSchema: z.object({ q: z.string() }),
          resumeSchema: z.object({}),
          deadline: { in: 120_000, onDeadline: "cancel", reason: "Nobody answered in two minutes." },
        },
      },
      execute: (ctx) => {
        ctx.suspend("ask", { q: "?" }, { deadline: { in: 60_000 } });
        ctx.suspend("ask", { q: "?" }, { deadline: { at: new Date(), onDeadline: "fail", reason: "Late." } });
        ctx.suspend("ask", { q: "?" }, { deadline: { at: "2030-01-01T00:00:00Z" } });
        ctx.suspend("ask", { q: "?" }, { deadline: null });
        ctx.suspend("ask", { q: "?" }, {});
        // @ts-expect-error `in` is milliseconds, not a duration string
        ctx.suspend("ask", { q: "?" }, { deadline: { in: "5m" } });
        // @ts-expect-error either `in` or `at`, not both
        ctx.suspend("ask", { q: "?" }, { deadline: { in: 5, at: new Date() } });
        // @ts-expect-error a deadline ends as a cancel or a fail
        ctx.suspend("ask", { q: "?" }, { deadline: { in: 5, onDeadline: "ignore" } });
        // @ts-expect-error unknown suspend point, deadline or not
        ctx.suspend("other", { q: "?" }, { deadline: { in: 5 } });
        return ctx.suspend("ask", { q: "?" });
      },
    });
    defineTool({
      id: "t.suspend-deadline-bad",
      description: "x",
      inputSchema: z.object({}),
      suspend: {
        later: {
          suspendSchema: z.object({}),
          resumeSchema: z.object({}),
          // @ts-expect-error a point's `in` is milliseconds, not a duration string
          deadline: { in: "5m" },
        },
      },
      execute: () => 1,
    });
    expectTypeOf<SuspendOptions["deadline"]>().toEqualTypeOf<DeadlineInput | null | undefined>();
  });

  test("a client-routed tool's deadline is fixed or a function of its typed input", () => {
    defineTool({
      id: "t.client-deadline",
      description: "x",
      inputSchema: z.object({ urgent: z.boolean() }),
      deadline: (input) => {
        expectTypeOf(input).toEqualTypeOf<{ urgent: boolean }>();
        return input.urgent ? { in: 30_000, onDeadline: "fail" } : null;
      },
    });
    defineTool({
      id: "t.client-deadline-fixed",
      description: "x",
      inputSchema: z.object({}),
      deadline: { at: "2030-01-01T00:00:00Z" },
    });
    defineTool({
      id: "t.client-deadline-bad",
      description: "x",
      inputSchema: z.object({}),
      // @ts-expect-error the function must return a deadline or null
      deadline: () => "5m",
    });
    expectTypeOf<ActionDeadline["resolution"]>().toEqualTypeOf<"cancel" | "fail">();
  });

  test("ctx.data.write is typed per channel", () => {
    defineTool({
      id: "t.write",
      description: "x",
      inputSchema: z.object({}),
      dataSchemas: { progress: z.object({ pct: z.number() }) },
      execute: async (ctx) => {
        await ctx.data.write("progress", { pct: 0.5 }, { id: "a", transient: true });
        // @ts-expect-error unknown channel
        await ctx.data.write("other", { pct: 0.5 });
        // @ts-expect-error wrong value
        await ctx.data.write("progress", { pct: "half" });
        const items = await ctx.data.list("progress");
        expectTypeOf(items[0].value).toEqualTypeOf<{ pct: number }>();
        return null;
      },
    });
  });

  test("ctx.capabilities is typed from the declaration and aliasable", () => {
    const store = defineCapability<{ get(key: string): Promise<string | null> }>()({ id: "test.store" });
    defineTool({
      id: "t.caps",
      description: "x",
      inputSchema: z.object({}),
      capabilities: { kv: store },
      execute: async (ctx) => {
        expectTypeOf(ctx.capabilities.kv.get).returns.toEqualTypeOf<Promise<string | null>>();
        // @ts-expect-error only the declared ctx name exists
        ctx.capabilities.store;
        return null;
      },
    });
  });

  test("ctx.tools entries take raw input and return parsed output", () => {
    const child = defineTool({
      id: "t.child",
      description: "child",
      inputSchema: z.object({ n: z.string().transform(Number) }),
      outputSchema: z.object({ doubled: z.number() }),
      execute: ({ input }) => {
        expectTypeOf(input.n).toEqualTypeOf<number>();
        return { doubled: input.n * 2 };
      },
    });
    defineTool({
      id: "t.parent",
      description: "x",
      inputSchema: z.object({}),
      tools: { child },
      execute: async (ctx) => {
        expectTypeOf(ctx.tools.child.enabled).toEqualTypeOf<boolean>();
        const result = await ctx.tools.child.execute({ n: "2" }, { abortSignal: ctx.signal });
        expectTypeOf(result).toEqualTypeOf<{ doubled: number }>();
        // @ts-expect-error raw input is a string
        await ctx.tools.child.execute({ n: 2 });
        expectTypeOf(ctx.tools).toExtend<ToolSet>();
        return result.doubled;
      },
    });
    expectTypeOf<BoundChildTool<typeof child>["inputSchema"]>().toEqualTypeOf(child.config.inputSchema);
  });

  test("description callbacks see the context and optional metadata of enabled children", () => {
    expectTypeOf(regionalTotal.contract.output).toEqualTypeOf<number>();
    const child = defineTool({
      id: "t.describe.child",
      description: "c",
      inputSchema: z.object({}),
      execute: () => 1,
    });
    defineTool({
      id: "t.describe",
      contextSchema: z.object({ locale: z.string() }),
      inputSchema: z.object({}),
      tools: { child },
      description: ({ context, tools }) => {
        expectTypeOf(context).toEqualTypeOf<{ locale: string }>();
        expectTypeOf(tools.child).toEqualTypeOf<ToolDescriptionMetadata<typeof child> | undefined>();
        // @ts-expect-error possibly absent: disabled children are omitted
        tools.child.description;
        return tools.child?.description ?? "";
      },
      execute: () => null,
    });
  });

  test("child registrations see the enclosing tool context", () => {
    expectTypeOf(guardedTotal.context).toEqualTypeOf<{ currency: string; canRead: boolean }>();
    const needsTenant = defineTool({
      id: "t.tenant",
      description: "x",
      inputSchema: z.object({}),
      contextSchema: z.object({ tenant: z.string() }),
      execute: () => 1,
    });
    // Without contextSchema the parent requires its children's contexts.
    const parent = defineTool({
      id: "t.p1",
      description: "x",
      inputSchema: z.object({}),
      tools: { needsTenant },
      execute: () => 1,
    });
    expectTypeOf(parent.context).toEqualTypeOf<{ tenant: string }>();
    defineTool({
      id: "t.p2",
      description: "x",
      inputSchema: z.object({}),
      contextSchema: z.object({ other: z.number() }),
      // @ts-expect-error the parent context does not satisfy the child: mapContext is required
      tools: { needsTenant },
      execute: () => 1,
    });
    defineTool({
      id: "t.p3",
      description: "x",
      inputSchema: z.object({}),
      contextSchema: z.object({ other: z.number() }),
      tools: {
        needsTenant: {
          tool: needsTenant,
          mapContext: ({ runtimeContext }) => ({ tenant: String(runtimeContext.other) }),
        },
      },
      execute: () => 1,
    });
  });

  test("execute results: output, ctx.suspend and ctx.fail", () => {
    expectTypeOf(draftReport.contract.output).toEqualTypeOf<
      { status: "rejected"; comment?: string | undefined } | { fileId: string }
    >();
    defineTool({
      id: "t.result",
      description: "x",
      inputSchema: z.object({}),
      outputSchema: z.object({ ok: z.boolean() }),
      // @ts-expect-error output must match outputSchema
      execute: (_ctx) => ({ ok: "yes" }),
    });
    expectTypeOf<ReturnType<typeof collectReportDetails.config.inputSchema.parse>>().toEqualTypeOf<{
      reportId: string;
      knownSummary: string;
    }>();
    expectTypeOf<ToolFailResult["message"]>().toEqualTypeOf<string>();
    expectTypeOf<ToolSuspendResult<typeof requestApproval.contract, "approval">["input"]>().toEqualTypeOf<{
      prompt: string;
    }>();
  });

  test("toModelOutput receives the typed output", () => {
    defineTool({
      id: "t.model-output",
      description: "x",
      inputSchema: z.object({ q: z.string() }),
      outputSchema: z.object({ text: z.string() }),
      execute: ({ input }) => ({ text: input.q }),
      toModelOutput: ({ input, output }) => {
        expectTypeOf(input).toEqualTypeOf<{ q: string }>();
        expectTypeOf(output).toEqualTypeOf<{ text: string }>();
        return { type: "text", value: output.text };
      },
    });
  });

  test("resolver args carry the registered identity type", () => {
    expectTypeOf<ToolResolverArgs["identity"]>().toEqualTypeOf<Identity>();
  });
});
