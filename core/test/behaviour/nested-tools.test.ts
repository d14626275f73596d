import {
  type CapabilityBinding,
  defineAgent,
  defineCapability,
  defineTool,
  REDACTED_ERROR_MESSAGE,
  ToolInvocationError,
} from "@pai/core";
import { scriptedModel } from "@pai/core/testing";
import { generateText } from "ai";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { createTestRuntime } from "../support/test-runtime.js";
import { eventually, projectedPart, scripted, toolResultFor } from "./_helpers.js";

const report = defineTool({
  id: "test.nested.report.v1",
  description: "Read a regional report",
  inputSchema: z.object({ region: z.string() }),
  outputSchema: z.object({ amount: z.number() }),
  execute: ({ input }) => ({ amount: { north: 10, south: 32 }[input.region] ?? 0 }),
});

const callParent = (toolName: string, input: unknown = {}) => [
  { toolCalls: [{ toolName, toolCallId: "call-parent", input }] },
  { text: "Done." },
];

/** Runs one parent call through a test runtime and returns its projected part. */
async function runParent(
  tools: Parameters<typeof defineAgent>[0]["tools"],
  toolName: string,
  input: unknown = {},
  extra: Partial<Parameters<typeof createTestRuntime>[0]> = {},
) {
  const t = await createTestRuntime({
    onRuntimeError: () => undefined,
    ...extra,
    agent: extra.agent ?? defineAgent({ tools }),
    model: extra.model ?? callParent(toolName, input),
  });
  const threadId = await t.createThread();
  const snapshot = await t.send(threadId, "go");
  return { t, threadId, snapshot, part: projectedPart(snapshot, "call-parent") };
}

describe("nested tool calls", () => {
  it("a parent tool sums its child calls", async () => {
    const total = defineTool({
      id: "test.nested.total.v1",
      description: "Calculate a total from regional reports.",
      inputSchema: z.object({ regions: z.array(z.string()) }),
      outputSchema: z.number(),
      tools: { report },
      execute: async ({ input, tools }) => {
        const reports = await Promise.all(input.regions.map((region) => tools.report.execute({ region })));
        return reports.reduce((sum, result) => sum + result.amount, 0);
      },
    });
    const { part } = await runParent({ total }, "total", { regions: ["north", "south"] });
    expect(part).toMatchObject({ state: "output-available", output: 42 });
  });

  it("ctx.tools entries carry enabled, the child's schemas and an execute taking raw input and returning validated output", async () => {
    const seenInputs: unknown[] = [];
    const parse = defineTool({
      id: "test.nested.parse.v1",
      description: "Parse a number",
      inputSchema: z.object({ value: z.string().transform(Number) }),
      outputSchema: z.object({ doubled: z.number(), label: z.string().default("none") }),
      execute: ({ input }) => {
        seenInputs.push(input);
        // `label` is left to the output schema's default.
        return { doubled: input.value * 2 } as never;
      },
    });
    let shape: Record<string, unknown> = {};
    const parent = defineTool({
      id: "test.nested.parse-parent.v1",
      description: "Parent",
      inputSchema: z.object({}),
      tools: { parse },
      execute: async ({ tools }) => {
        shape = {
          enabled: tools.parse.enabled,
          inputSchema: tools.parse.inputSchema,
          outputSchema: tools.parse.outputSchema,
          execute: typeof tools.parse.execute,
        };
        return tools.parse.execute({ value: "21" });
      },
    });
    const { part } = await runParent({ parent }, "parent");

    expect(seenInputs).toEqual([{ value: 21 }]);
    expect(part).toMatchObject({ state: "output-available", output: { doubled: 42, label: "none" } });
    expect(shape).toEqual({
      enabled: true,
      inputSchema: parse.config.inputSchema,
      outputSchema: parse.config.outputSchema,
      execute: "function",
    });
  });

  it("invalid child input or output rejects with ToolInvocationError", async () => {
    const badOutput = defineTool({
      id: "test.nested.bad-output.v1",
      description: "Returns the wrong shape",
      inputSchema: z.object({}),
      outputSchema: z.object({ ok: z.boolean() }),
      execute: () => ({ ok: "yes" }) as never,
    });
    const errors: Array<{ instance: boolean; toolName: string; message: string }> = [];
    const parent = defineTool({
      id: "test.nested.validating-parent.v1",
      description: "Parent",
      inputSchema: z.object({}),
      tools: { report, badOutput },
      execute: async ({ tools }) => {
        for (const call of [
          () => tools.report.execute({ region: 5 } as never),
          () => tools.badOutput.execute({}),
        ]) {
          try {
            await call();
          } catch (error) {
            errors.push({
              instance: ToolInvocationError.isInstance(error),
              toolName: (error as ToolInvocationError).toolName,
              message: (error as Error).message,
            });
          }
        }
        return null;
      },
    });
    await runParent({ parent }, "parent");

    expect(errors).toHaveLength(2);
    expect(errors.map((error) => [error.instance, error.toolName])).toEqual([
      [true, "report"],
      [true, "badOutput"],
    ]);
    expect(errors[0]!.message).toMatch(/region/);
    expect(errors[1]!.message).toMatch(/outputSchema/);
  });

  it("child availability is resolved once per parent invocation and stays fixed even if its source changes", async () => {
    const state = { allowed: true };
    let resolverCalls = 0;
    const observed: Array<{ enabled: boolean; results: string[] }> = [];
    const parent = defineTool({
      id: "test.nested.fixed-parent.v1",
      description: "Parent",
      inputSchema: z.object({}),
      tools: {
        report: {
          tool: report,
          enabled: () => {
            resolverCalls++;
            return state.allowed;
          },
        },
      },
      execute: async ({ tools }) => {
        const results: string[] = [];
        for (let i = 0; i < 2; i++) {
          try {
            results.push(String((await tools.report.execute({ region: "north" })).amount));
          } catch (error) {
            results.push(ToolInvocationError.isInstance(error) ? "rejected" : "other");
          }
          // The resolver's source changes while the parent is running.
          state.allowed = false;
        }
        observed.push({ enabled: tools.report.enabled, results });
        return null;
      },
    });
    await runParent(
      { parent },
      "parent",
      {},
      {
        model: [
          { toolCalls: [{ toolName: "parent", toolCallId: "call-parent", input: {} }] },
          { toolCalls: [{ toolName: "parent", toolCallId: "call-parent-2", input: {} }] },
          { text: "Done." },
        ],
      },
    );

    // First invocation: enabled when resolved, so both calls run although the source changed in between.
    // Second invocation: a fresh resolution sees the changed source.
    expect(observed).toEqual([
      { enabled: true, results: ["10", "10"] },
      { enabled: false, results: ["rejected", "rejected"] },
    ]);
    expect(resolverCalls).toBe(2);
  });

  it("child registrations receive the enclosing tool's context as runtimeContext", async () => {
    const seen: unknown[] = [];
    const scoped = defineTool({
      id: "test.nested.scoped.v1",
      description: "Scoped",
      contextSchema: z.object({ region: z.string() }),
      inputSchema: z.object({}),
      outputSchema: z.string(),
      execute: ({ context }) => context.region,
    });
    const inherits = defineTool({
      id: "test.nested.inherits.v1",
      description: "Inherits",
      contextSchema: z.object({ tenant: z.string() }),
      inputSchema: z.object({}),
      outputSchema: z.string(),
      execute: ({ context }) => context.tenant,
    });
    const parent = defineTool({
      id: "test.nested.context-parent.v1",
      description: "Parent",
      contextSchema: z.object({ tenant: z.string() }),
      inputSchema: z.object({}),
      tools: {
        scoped: {
          tool: scoped,
          enabled: ({ runtimeContext }) => {
            seen.push(runtimeContext);
            return true;
          },
          mapContext: ({ runtimeContext }) => ({ region: `${runtimeContext.tenant}-north` }),
        },
        inherits,
      },
      execute: async ({ tools }) => [await tools.scoped.execute({}), await tools.inherits.execute({})],
    });
    const { part } = await runParent(
      {},
      "parent",
      {},
      {
        agent: defineAgent({
          runtimeContext: () => ({ whole: "agent context" }),
          tools: { parent: { tool: parent, mapContext: () => ({ tenant: "acme" }) } },
        }),
      },
    );
    expect(part.output).toEqual(["acme-north", "acme"]);
    expect(seen).toEqual([{ tenant: "acme" }]);
  });

  it("the agent's afterToolResult keeps the agent's whole runtime context for a child call", async () => {
    const hookContexts: Array<{ toolName: string; runtimeContext: unknown }> = [];
    const registrationContexts: unknown[] = [];
    const parent = defineTool({
      id: "test.nested.hook-context-parent.v1",
      description: "Parent",
      contextSchema: z.object({ tenant: z.string() }),
      inputSchema: z.object({}),
      tools: {
        report: {
          tool: report,
          enabled: ({ runtimeContext }) => {
            registrationContexts.push(runtimeContext);
            return true;
          },
          onOutput: ({ runtimeContext }) => {
            registrationContexts.push(runtimeContext);
          },
        },
      },
      execute: async ({ tools }) => (await tools.report.execute({ region: "north" })).amount,
    });
    const { part } = await runParent(
      {},
      "parent",
      {},
      {
        agent: defineAgent({
          runtimeContext: () => ({ whole: "agent context", tenant: "acme" }),
          tools: { parent: { tool: parent, mapContext: () => ({ tenant: "narrowed" }) } },
          lifecycle: {
            afterToolResult: ({ toolName, runtimeContext }) => {
              hookContexts.push({ toolName, runtimeContext });
            },
          },
        }),
      },
    );
    expect(part.output).toBe(10);
    // Registration callbacks of the child see the enclosing tool's context...
    expect(registrationContexts).toEqual([{ tenant: "narrowed" }, { tenant: "narrowed" }]);
    // ...and the agent's hook sees the agent's, for the child call as for the parent call.
    expect(hookContexts).toEqual([
      { toolName: "report", runtimeContext: { whole: "agent context", tenant: "acme" } },
      { toolName: "parent", runtimeContext: { whole: "agent context", tenant: "acme" } },
    ]);
  });

  it("the parent's invocation closes its children's handles when it finishes", async () => {
    let kept: ((input: { region: string }) => Promise<unknown>) | undefined;
    let slowSignal: AbortSignal | undefined;
    let entered = 0;
    const hooked: string[] = [];
    const slow = defineTool({
      id: "test.nested.unawaited.v1",
      description: "Slow",
      inputSchema: z.object({}),
      outputSchema: z.string(),
      execute: (ctx) => {
        slowSignal = ctx.signal;
        return new Promise<string>((resolve) => setTimeout(() => resolve("late"), 50));
      },
    });
    const counted = defineTool({
      id: "test.nested.counted.v1",
      description: "Counted",
      inputSchema: z.object({ region: z.string() }),
      outputSchema: z.object({ amount: z.number() }),
      execute: () => {
        entered++;
        return { amount: 1 };
      },
    });
    let unawaited: Promise<unknown> | undefined;
    const parent = defineTool({
      id: "test.nested.closing-parent.v1",
      description: "Parent",
      inputSchema: z.object({}),
      tools: { counted, slow },
      execute: async ({ tools }) => {
        kept = tools.counted.execute;
        // Not awaited: the parent returns while this child runs.
        unawaited = tools.slow.execute({});
        unawaited.catch(() => undefined);
        return (await tools.counted.execute({ region: "north" })).amount;
      },
    });
    const { part } = await runParent(
      {},
      "parent",
      {},
      {
        agent: defineAgent({
          tools: { parent },
          lifecycle: {
            afterToolResult: ({ toolName }) => {
              hooked.push(toolName);
            },
          },
        }),
      },
    );
    expect(part.output).toBe(1);
    expect(entered).toBe(1);
    // The child still running when the parent returned was cancelled, and its result skips the hooks.
    expect(slowSignal?.aborted).toBe(true);
    const late = await unawaited!.then(
      () => null,
      (error: unknown) => error,
    );
    expect(ToolInvocationError.isInstance(late)).toBe(true);
    // A handle kept past the parent's return refuses, without running the child or its hooks.
    const error = await kept!({ region: "north" }).then(
      () => null,
      (rejection: unknown) => rejection,
    );
    expect(ToolInvocationError.isInstance(error)).toBe(true);
    expect((error as Error).message).toContain(
      "after that call finished. Await child calls before returning.",
    );
    expect(entered).toBe(1);
    expect(hooked).toEqual(["counted", "parent"]);
  });

  it("children that could not run inside a parent are rejected when the parent is defined", () => {
    const suspending = defineTool({
      id: "test.nested.suspending.v1",
      description: "Suspends",
      inputSchema: z.object({}),
      suspend: { wait: { suspendSchema: z.object({}), resumeSchema: z.object({}) } },
      execute: (ctx) => ctx.suspend("wait", {}),
    });
    const clientRouted = defineTool({
      id: "test.nested.client-routed.v1",
      description: "Answered by a client",
      inputSchema: z.object({}),
    });
    const withData = defineTool({
      id: "test.nested.with-data.v1",
      description: "Writes data",
      inputSchema: z.object({}),
      dataSchemas: { progress: z.number() },
      execute: () => null,
    });
    const nestedParent = defineTool({
      id: "test.nested.inner-parent.v1",
      description: "Has children",
      inputSchema: z.object({}),
      tools: { report },
      execute: () => null,
    });
    for (const child of [suspending, clientRouted, withData, nestedParent]) {
      expect(() =>
        defineTool({
          id: "test.nested.bad-parent.v1",
          description: "Bad parent",
          inputSchema: z.object({}),
          tools: { child } as never,
          execute: () => null,
        }),
      ).toThrow(expect.objectContaining({ code: "INVALID_DEFINITION" }));
    }
  });

  it("a disabled child rejects without mapping context or acquiring capabilities", async () => {
    const token = defineCapability<{ ping(): string }>()({ id: "test.nested.token" });
    let acquired = 0;
    let mapped = 0;
    const binding: CapabilityBinding<{ ping(): string }> = {
      acquire: () => {
        acquired++;
        return { ping: () => "pong" };
      },
    };
    const pinger = defineTool({
      id: "test.nested.pinger.v1",
      description: "Ping",
      inputSchema: z.object({}),
      capabilities: { token },
      execute: (ctx) => ctx.capabilities.token.ping(),
    });
    const outcomes: unknown[] = [];
    const parent = defineTool({
      id: "test.nested.gated-parent.v1",
      description: "Parent",
      inputSchema: z.object({}),
      tools: {
        pinger: {
          tool: pinger,
          enabled: false,
          mapContext: () => {
            mapped++;
            return {};
          },
        },
      },
      execute: async ({ tools }) => {
        outcomes.push(tools.pinger.enabled);
        try {
          await tools.pinger.execute({});
          outcomes.push("ran");
        } catch (error) {
          outcomes.push(ToolInvocationError.isInstance(error) ? "ToolInvocationError" : "other");
        }
        return null;
      },
    });
    await runParent({ parent }, "parent", {}, { capabilities: { "test.nested.token": binding } });

    expect(outcomes).toEqual([false, "ToolInvocationError"]);
    expect(mapped).toBe(0);
    expect(acquired).toBe(0);
  });

  it("a child's capabilities are acquired for the child call", async () => {
    const token = defineCapability<{ ping(): string }>()({ id: "test.nested.token2" });
    const pinger = defineTool({
      id: "test.nested.pinger2.v1",
      description: "Ping",
      inputSchema: z.object({}),
      outputSchema: z.string(),
      capabilities: { token },
      execute: (ctx) => ctx.capabilities.token.ping(),
    });
    const parent = defineTool({
      id: "test.nested.cap-parent.v1",
      description: "Parent",
      inputSchema: z.object({}),
      tools: { pinger },
      execute: ({ tools }) => tools.pinger.execute({}),
    });
    const { part } = await runParent(
      { parent },
      "parent",
      {},
      {
        capabilities: { "test.nested.token2": { acquire: () => ({ ping: () => "pong" }) } },
      },
    );
    expect(part).toMatchObject({ state: "output-available", output: "pong" });
  });

  it("child onOutput runs on the output delivered to the calling program", async () => {
    const observed: Array<{ input: unknown; output: unknown; name: string }> = [];
    const parent = defineTool({
      id: "test.nested.observed-parent.v1",
      description: "Parent",
      inputSchema: z.object({}),
      tools: {
        report: {
          tool: report,
          onOutput: ({ input, output, tool }) => void observed.push({ input, output, name: tool.name }),
        },
      },
      execute: async ({ tools }) => (await tools.report.execute({ region: "south" })).amount,
    });
    const { part } = await runParent({ parent }, "parent");
    expect(part.output).toBe(32);
    expect(observed).toEqual([{ input: { region: "south" }, output: { amount: 32 }, name: "report" }]);
  });

  it("an unexpected child exception rejects with a generic message unless mapError supplies one; ctx.fail keeps its sentence", async () => {
    const exploding = defineTool({
      id: "test.nested.exploding.v1",
      description: "Explodes",
      inputSchema: z.object({ how: z.enum(["throw", "fail"]) }),
      execute: (ctx) => {
        if (ctx.input.how === "fail") return ctx.fail("Region closed; try south.");
        throw new Error("db password=hunter2 rejected");
      },
    });
    const parent = defineTool({
      id: "test.nested.catching-parent.v1",
      description: "Parent",
      inputSchema: z.object({}),
      tools: { exploding },
      execute: async ({ tools }) => {
        const messages: string[] = [];
        for (const how of ["throw", "fail"] as const) {
          try {
            await tools.exploding.execute({ how });
          } catch (error) {
            messages.push(`${ToolInvocationError.isInstance(error)}:${(error as Error).message}`);
          }
        }
        return messages;
      },
    });
    const plain = await runParent({ parent }, "parent");
    expect(plain.part.output).toEqual([expect.stringMatching(/^true:/), "true:Region closed; try south."]);
    expect(plain.part.output[0]).not.toContain("hunter2");

    const mapped = await runParent(
      { parent },
      "parent",
      {},
      {
        agent: defineAgent({
          tools: { parent },
          mapError: ({ toolName }) => `The ${toolName} service is unavailable.`,
        }),
      },
    );
    expect(mapped.part.output).toEqual([
      "true:The exploding service is unavailable.",
      "true:Region closed; try south.",
    ]);
  });

  it("a child onOutput failure stays fatal even when the parent catches the rejection", async () => {
    const parent = defineTool({
      id: "test.nested.fatal-parent.v1",
      description: "Parent",
      inputSchema: z.object({}),
      tools: {
        report: {
          tool: report,
          onOutput: () => {
            throw new Error("observer broke");
          },
        },
      },
      execute: async ({ tools }) => {
        try {
          await tools.report.execute({ region: "north" });
        } catch {
          // Swallowed on purpose: the runtime must still fail the run.
        }
        return "swallowed";
      },
    });
    const { t, threadId } = await runParent({ parent }, "parent");
    await eventually(async () => (await t.lastRun(threadId))?.status === "failed");
    const run = await t.lastRun(threadId);
    expect(run?.error).toBe(REDACTED_ERROR_MESSAGE);
    expect(scripted(t).calls).toHaveLength(1);
  });

  it("children are not conversation parts and their toModelOutput does not run", async () => {
    let converted = 0;
    const chart = defineTool({
      id: "test.nested.chart.v1",
      description: "Chart",
      inputSchema: z.object({}),
      outputSchema: z.object({ points: z.number() }),
      execute: () => ({ points: 3 }),
      toModelOutput: () => {
        converted++;
        return { type: "text", value: "converted" };
      },
    });
    const parent = defineTool({
      id: "test.nested.chart-parent.v1",
      description: "Parent",
      inputSchema: z.object({}),
      tools: { chart },
      execute: async ({ tools }) => ({ total: (await tools.chart.execute({})).points }),
    });
    const { t, snapshot } = await runParent({ parent }, "parent");

    const toolParts = await t.toolParts(snapshot.thread.threadId);
    expect(toolParts.map((part) => part.toolCallId)).toEqual(["call-parent"]);
    expect(converted).toBe(0);
    expect(toolResultFor(scripted(t), 1, "call-parent").output).toEqual({
      type: "json",
      value: { total: 3 },
    });
    expect(snapshot.actions).toEqual([]);
  });

  it("an abortSignal passed to one child call cancels that call only", async () => {
    const slow = defineTool({
      id: "test.nested.slow.v1",
      description: "Slow",
      inputSchema: z.object({ ms: z.number() }),
      outputSchema: z.string(),
      execute: (ctx) =>
        new Promise<string>((resolve, reject) => {
          entered++;
          const timer = setTimeout(() => resolve(`slept ${ctx.input.ms}`), ctx.input.ms);
          const stop = () => {
            clearTimeout(timer);
            reject(new Error("aborted"));
          };
          if (ctx.signal.aborted) stop();
          else ctx.signal.addEventListener("abort", stop, { once: true });
        }),
    });
    let entered = 0;
    const parent = defineTool({
      id: "test.nested.abort-parent.v1",
      description: "Parent",
      inputSchema: z.object({}),
      tools: { slow },
      execute: async ({ tools }) => {
        const controller = new AbortController();
        const short = tools.slow.execute({ ms: 5_000 }, { abortSignal: controller.signal });
        const sibling = tools.slow.execute({ ms: 60 });
        setTimeout(() => controller.abort(), 20);
        const [first, second] = await Promise.allSettled([short, sibling]);
        return [
          first.status === "rejected" && ToolInvocationError.isInstance(first.reason)
            ? "ToolInvocationError"
            : "?",
          second.status === "fulfilled" ? second.value : "rejected",
        ];
      },
    });
    const started = Date.now();
    const { part } = await runParent({ parent }, "parent");
    expect(part.output).toEqual(["ToolInvocationError", "slept 60"]);
    expect(entered).toBe(2);
    expect(Date.now() - started).toBeLessThan(4_000);
  });

  it("a child call whose abortSignal aborts before its execute is entered never enters it", async () => {
    let entered = 0;
    const child = defineTool({
      id: "test.nested.counted-child.v1",
      description: "Counted",
      inputSchema: z.object({}),
      execute: () => {
        entered++;
        return null;
      },
    });
    const parent = defineTool({
      id: "test.nested.preaborted-parent.v1",
      description: "Parent",
      inputSchema: z.object({}),
      tools: { child },
      execute: async ({ tools }) => {
        const controller = new AbortController();
        const call = tools.child.execute({}, { abortSignal: controller.signal });
        // Aborted while the runtime is still validating input and mapping context for the call.
        controller.abort();
        const [settled] = await Promise.allSettled([call]);
        return settled.status;
      },
    });
    const { part } = await runParent({ parent }, "parent");
    expect(part.output).toBe("rejected");
    expect(entered).toBe(0);
  });

  it("the ctx.tools map works as an AI SDK ToolSet", async () => {
    const parent = defineTool({
      id: "test.nested.sdk-parent.v1",
      description: "Lets an inner model call the children",
      inputSchema: z.object({}),
      tools: { report },
      execute: async ({ tools }) => {
        const inner = scriptedModel([
          { toolCalls: [{ toolName: "report", toolCallId: "inner-1", input: { region: "south" } }] },
        ]);
        const result = await generateText({ model: inner, tools, prompt: "report south" });
        return {
          offered: (inner.calls[0]?.tools ?? []).map((tool) => tool.name),
          results: result.toolResults.map((toolResult) => toolResult.output),
        };
      },
    });
    const { part } = await runParent({ parent }, "parent");
    expect(part).toMatchObject({
      state: "output-available",
      output: { offered: ["report"], results: [{ amount: 32 }] },
    });
  });
});
