import { agentManifest, defineAgent, defineTool } from "@pai/core";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { createTestRuntime } from "../support/test-runtime.js";
import { offeredTool, projectedPart, rejection, scripted, toolNamesInCall } from "./_helpers.js";

const lookup = defineTool({
  id: "test.availability.lookup.v1",
  description: "Look something up",
  inputSchema: z.object({ q: z.string() }),
  outputSchema: z.object({ found: z.boolean() }),
  execute: () => ({ found: true }),
});

const approve = defineTool({
  id: "test.availability.approve.v1",
  description: "Ask for approval",
  inputSchema: z.object({ summary: z.string() }),
  outputSchema: z.object({ approved: z.boolean() }),
  suspend: {
    approval: {
      suspendSchema: z.object({ prompt: z.string() }),
      resumeSchema: z.object({ approved: z.boolean() }),
    },
  },
  execute: (ctx) =>
    ctx.entry.type === "initial" ? ctx.suspend("approval", { prompt: ctx.input.summary }) : ctx.entry.resume,
});

const callApprove = {
  toolCalls: [{ toolName: "approve", toolCallId: "call-approve", input: { summary: "Ship" } }],
};

describe("tool availability (enabled)", () => {
  it("a disabled tool is absent from the model request but stays in the agent manifest", async () => {
    const agent = defineAgent({
      runtimeContext: () => ({ canLookup: false }),
      tools: {
        lookup: { tool: lookup, enabled: ({ runtimeContext }) => runtimeContext.canLookup },
        always: { tool: lookup },
      },
    });
    const t = await createTestRuntime({ agent, model: [{ text: "Hi." }] });
    const threadId = await t.createThread();
    await t.send(threadId, "hello");

    expect(toolNamesInCall(scripted(t), 0)).toEqual(["always"]);
    const manifest = await agentManifest(agent);
    expect(Object.keys(manifest.tools).sort()).toEqual(["always", "lookup"]);
    expect(manifest.tools.lookup).toMatchObject({ id: "test.availability.lookup.v1", hasExecute: true });
    const served = await t.pai.service.manifest({ identity: t.identity });
    expect(Object.keys(served.tools as object).sort()).toEqual(["always", "lookup"]);
  });

  it("the enabled resolver receives runtimeContext, identity, clientData, threadId and signal", async () => {
    const seen: Array<Record<string, unknown>> = [];
    const agent = defineAgent({
      runtimeContext: ({ identity }) => ({ role: (identity as { role: string }).role }),
      tools: {
        lookup: {
          tool: lookup,
          enabled: (args) => {
            seen.push({ ...args });
            return true;
          },
        },
      },
    });
    const t = await createTestRuntime({
      agent,
      model: [{ text: "Hi." }],
      identity: { scopeKey: "tenant-a", userKey: "u1", role: "admin" },
    });
    const threadId = await t.createThread();
    await t.send(threadId, "hello", { clientData: { page: "/inbox" } });

    expect(seen.length).toBeGreaterThanOrEqual(1);
    expect(seen[0]).toMatchObject({
      runtimeContext: { role: "admin" },
      identity: { scopeKey: "tenant-a", userKey: "u1", role: "admin" },
      clientData: { page: "/inbox" },
      threadId,
    });
    expect(seen[0]!.signal).toBeInstanceOf(AbortSignal);
  });

  it("enabled is resolved again before each model step", async () => {
    const state = { open: true };
    const agent = defineAgent({
      tools: {
        closeGate: {
          tool: defineTool({
            id: "test.availability.close-gate.v1",
            description: "Close the gate",
            inputSchema: z.object({}),
            execute: () => {
              state.open = false;
              return null;
            },
          }),
        },
        lookup: { tool: lookup, enabled: () => state.open },
      },
    });
    const t = await createTestRuntime({
      agent,
      model: [
        { toolCalls: [{ toolName: "closeGate", toolCallId: "call-close", input: {} }] },
        { text: "Closed." },
      ],
    });
    const threadId = await t.createThread();
    await t.send(threadId, "close it");

    expect(toolNamesInCall(scripted(t), 0)).toEqual(["closeGate", "lookup"]);
    expect(toolNamesInCall(scripted(t), 1)).toEqual(["closeGate"]);
  });

  it("a model call to a disabled tool does not execute it and becomes an output-error", async () => {
    let executed = 0;
    const agent = defineAgent({
      tools: {
        lookup: {
          tool: defineTool({
            id: "test.availability.counted.v1",
            description: "Counted",
            inputSchema: z.object({}),
            execute: () => {
              executed++;
              return null;
            },
          }),
          enabled: false,
        },
      },
    });
    const t = await createTestRuntime({
      agent,
      model: [{ toolCalls: [{ toolName: "lookup", toolCallId: "call-x", input: {} }] }, { text: "Sorry." }],
    });
    const threadId = await t.createThread();
    const snapshot = await t.send(threadId, "go");

    expect(executed).toBe(0);
    expect(projectedPart(snapshot, "call-x")).toMatchObject({ state: "output-error" });
    expect(snapshot.runs.at(-1)?.status).toBe("completed");
  });

  it("a tool disabled while its action is pending rejects submit with TOOL_DISABLED; fail still closes it", async () => {
    const state = { enabled: true };
    const t = await createTestRuntime({
      agent: defineAgent({ tools: { approve: { tool: approve, enabled: () => state.enabled } } }),
      model: [callApprove, { text: "Understood." }],
    });
    const threadId = await t.createThread();
    await t.send(threadId, "ship it");
    state.enabled = false;

    const error = await rejection(t.submit(threadId, "approve.approval", { approved: true }));
    expect(error.code).toBe("TOOL_DISABLED");
    expect((await t.pending(threadId)).map((action) => action.name)).toEqual(["approve.approval"]);

    const done = await t.fail(threadId, "approve.approval", "No longer needed.");
    expect(done.actions[0]).toMatchObject({ state: "failed" });
    expect(projectedPart(done, "call-approve")).toMatchObject({
      state: "output-error",
      errorText: "No longer needed.",
    });
    expect(done.runs.at(-1)?.status).toBe("completed");
  });

  it("a client-routed tool disabled while its output action is pending rejects submit; cancel still closes it", async () => {
    const state = { enabled: true };
    const pick = defineTool({
      id: "test.availability.pick.v1",
      description: "Let the user pick",
      inputSchema: z.object({}),
      outputSchema: z.object({ choice: z.string() }),
    });
    const t = await createTestRuntime({
      agent: defineAgent({ tools: { pick: { tool: pick, enabled: () => state.enabled } } }),
      model: [{ toolCalls: [{ toolName: "pick", toolCallId: "call-pick", input: {} }] }, { text: "Ok." }],
    });
    const threadId = await t.createThread();
    await t.send(threadId, "pick");
    state.enabled = false;

    const error = await rejection(t.submit(threadId, "pick.output", { choice: "a" }));
    expect(error.code).toBe("TOOL_DISABLED");
    const done = await t.cancel(threadId, "pick.output", "obsolete");
    expect(done.actions[0]).toMatchObject({ state: "cancelled" });
    expect(projectedPart(done, "call-pick")).toMatchObject({ state: "output-error", cancelled: true });
  });

  it("resumed execution is rejected when the tool became disabled after the submit was accepted", async () => {
    let entries: string[] = [];
    let allowed = Number.POSITIVE_INFINITY;
    const tool = defineTool({
      id: "test.availability.approve-counted.v1",
      description: "Ask for approval",
      inputSchema: z.object({ summary: z.string() }),
      outputSchema: z.object({ approved: z.boolean() }),
      suspend: {
        approval: {
          suspendSchema: z.object({ prompt: z.string() }),
          resumeSchema: z.object({ approved: z.boolean() }),
        },
      },
      execute: (ctx) => {
        entries.push(ctx.entry.type);
        return ctx.entry.type === "initial" ? ctx.suspend("approval", { prompt: "?" }) : ctx.entry.resume;
      },
    });
    const t = await createTestRuntime({
      agent: defineAgent({
        tools: {
          approve: {
            tool,
            // Enabled for exactly `allowed` more checks: the submit check passes, the resume check fails.
            enabled: () => allowed-- > 0,
          },
        },
      }),
      model: [callApprove, { text: "Done." }],
    });
    const threadId = await t.createThread();
    await t.send(threadId, "ship it");
    entries = [];
    allowed = 1;

    const done = await t.submit(threadId, "approve.approval", { approved: true });
    expect(entries).toEqual([]);
    const part = projectedPart(done, "call-approve");
    expect(part.state).toBe("output-error");
    expect(part).not.toHaveProperty("output");
  });

  it("enabled is rechecked on a tool data write: a write after the tool was disabled is rejected", async () => {
    const state = { enabled: true };
    const codes: string[] = [];
    const progress = defineTool({
      id: "test.availability.progress.v1",
      description: "Report progress",
      inputSchema: z.object({}),
      dataSchemas: { progress: z.object({ pct: z.number() }) },
      execute: async (ctx) => {
        await ctx.data.write("progress", { pct: 0.5 }, { id: "p" });
        state.enabled = false;
        try {
          await ctx.data.write("progress", { pct: 1 }, { id: "p" });
          codes.push("written");
        } catch (error) {
          codes.push((error as { code?: string }).code ?? "unknown");
        }
        return null;
      },
    });
    const t = await createTestRuntime({
      agent: defineAgent({ tools: { progress: { tool: progress, enabled: () => state.enabled } } }),
      model: [{ toolCalls: [{ toolName: "progress", toolCallId: "call-p", input: {} }] }, { text: "Ok." }],
    });
    const threadId = await t.createThread();
    const snapshot = await t.send(threadId, "go");

    expect(codes).toEqual(["TOOL_DISABLED"]);
    expect(snapshot.toolData.map((item) => item.value)).toEqual([{ pct: 0.5 }]);
  });
});

describe("context mapping and descriptions", () => {
  const priced = defineTool({
    id: "test.availability.format-price.v1",
    contextSchema: z.object({ currency: z.enum(["USD", "EUR"]) }),
    inputSchema: z.object({ amountCents: z.number().int() }),
    outputSchema: z.string(),
    description: ({ context }) => `Format a price in ${context.currency}.`,
    execute: ({ input, context }) => `${input.amountCents / 100} ${context.currency}`,
  });

  it("mapContext is per registration and the model sees descriptions resolved from the mapped context", async () => {
    const agent = defineAgent({
      runtimeContext: () => ({ home: "EUR" as const }),
      tools: {
        priceHome: { tool: priced, mapContext: ({ runtimeContext }) => ({ currency: runtimeContext.home }) },
        priceUs: { tool: priced, mapContext: () => ({ currency: "USD" as const }) },
      },
    });
    const t = await createTestRuntime({
      agent,
      model: [
        { toolCalls: [{ toolName: "priceUs", toolCallId: "call-us", input: { amountCents: 250 } }] },
        { text: "Done." },
      ],
    });
    const threadId = await t.createThread();
    const snapshot = await t.send(threadId, "price it");

    expect(offeredTool(scripted(t), 0, "priceHome").description).toBe("Format a price in EUR.");
    expect(offeredTool(scripted(t), 0, "priceUs").description).toBe("Format a price in USD.");
    expect(projectedPart(snapshot, "call-us")).toMatchObject({
      state: "output-available",
      output: "2.5 USD",
    });
    // Static manifests have no runtime context: a callback description is an empty string there.
    expect((await agentManifest(agent)).tools.priceHome?.description).toBe("");
  });

  it("a dynamic description is resolved again for each model step", async () => {
    const state = { currency: "USD" as "USD" | "EUR" };
    const switchCurrency = defineTool({
      id: "test.availability.switch-currency.v1",
      description: "Switch to euros",
      inputSchema: z.object({}),
      execute: () => {
        state.currency = "EUR";
        return null;
      },
    });
    const t = await createTestRuntime({
      agent: defineAgent({
        tools: {
          price: { tool: priced, mapContext: () => ({ currency: state.currency }) },
          switchCurrency,
        },
      }),
      model: [
        { toolCalls: [{ toolName: "switchCurrency", toolCallId: "call-s", input: {} }] },
        { text: "Switched." },
      ],
    });
    const threadId = await t.createThread();
    await t.send(threadId, "switch");

    expect(offeredTool(scripted(t), 0, "price").description).toBe("Format a price in USD.");
    expect(offeredTool(scripted(t), 1, "price").description).toBe("Format a price in EUR.");
  });

  it("a parent description sees only its enabled children, with resolved description and schemas", async () => {
    const report = defineTool({
      id: "test.availability.report.v1",
      contextSchema: z.object({ region: z.string() }),
      description: ({ context }) => `Read the ${context.region} report.`,
      inputSchema: z.object({ region: z.string() }),
      outputSchema: z.object({ amount: z.number() }),
      execute: () => ({ amount: 1 }),
    });
    const audit = defineTool({
      id: "test.availability.audit.v1",
      description: "Read the audit log.",
      inputSchema: z.object({}),
      execute: () => null,
    });
    const seen: Array<Record<string, any>> = [];
    const total = defineTool({
      id: "test.availability.total.v1",
      contextSchema: z.object({ currency: z.string(), canAudit: z.boolean() }),
      inputSchema: z.object({}),
      tools: {
        report: { tool: report, mapContext: () => ({ region: "north" }) },
        audit: { tool: audit, enabled: ({ runtimeContext }) => runtimeContext.canAudit },
      },
      description: ({ context, tools }) => {
        seen.push(tools);
        return `Total in ${context.currency}. ${tools.report ? tools.report.description : "No reports."}`;
      },
      execute: () => 0,
    });
    const t = await createTestRuntime({
      agent: defineAgent({
        tools: { total: { tool: total, mapContext: () => ({ currency: "EUR", canAudit: false }) } },
      }),
      model: [{ text: "Hi." }],
    });
    const threadId = await t.createThread();
    await t.send(threadId, "hello");

    expect(offeredTool(scripted(t), 0, "total").description).toBe("Total in EUR. Read the north report.");
    expect(seen).toHaveLength(1);
    expect(Object.keys(seen[0]!)).toEqual(["report"]);
    expect(seen[0]!.report.description).toBe("Read the north report.");
    expect(seen[0]!.report.inputSchema.jsonSchema).toMatchObject({
      type: "object",
      properties: { region: { type: "string" } },
    });
    expect(seen[0]!.report.outputSchema.jsonSchema).toMatchObject({
      type: "object",
      properties: { amount: { type: "number" } },
    });
  });

  it("static or disabled parents skip child preparation, and static children skip context mapping", async () => {
    const counts = { childEnabled: 0, childMap: 0, childDescription: 0, staticChildMap: 0 };
    const dynamicChild = defineTool({
      id: "test.availability.dynamic-child.v1",
      contextSchema: z.object({ label: z.string() }),
      description: ({ context }) => {
        counts.childDescription++;
        return `Child ${context.label}`;
      },
      inputSchema: z.object({}),
      execute: () => null,
    });
    const staticChild = defineTool({
      id: "test.availability.static-child.v1",
      description: "Static child",
      inputSchema: z.object({}),
      execute: () => null,
    });
    const children = {
      child: {
        tool: dynamicChild,
        enabled: () => {
          counts.childEnabled++;
          return true;
        },
        mapContext: () => {
          counts.childMap++;
          return { label: "x" };
        },
      },
      plain: {
        tool: staticChild,
        mapContext: () => {
          counts.staticChildMap++;
          return {};
        },
      },
    };
    const staticParent = defineTool({
      id: "test.availability.static-parent.v1",
      description: "Static parent",
      inputSchema: z.object({}),
      tools: children,
      execute: () => null,
    });
    const dynamicParent = defineTool({
      id: "test.availability.dynamic-parent.v1",
      description: ({ tools }) => `Parent with ${Object.keys(tools).join(",")}`,
      inputSchema: z.object({}),
      tools: children,
      execute: () => null,
    });

    const t = await createTestRuntime({
      agent: defineAgent({
        tools: { staticParent, disabledParent: { tool: dynamicParent, enabled: false } },
      }),
      model: [{ text: "Hi." }],
    });
    const threadId = await t.createThread();
    await t.send(threadId, "hello");
    expect(toolNamesInCall(scripted(t), 0)).toEqual(["staticParent"]);
    expect(counts).toEqual({ childEnabled: 0, childMap: 0, childDescription: 0, staticChildMap: 0 });

    const u = await createTestRuntime({
      agent: defineAgent({ tools: { dynamicParent } }),
      model: [{ text: "Hi." }],
    });
    const otherThread = await u.createThread();
    await u.send(otherThread, "hello");
    expect(offeredTool(scripted(u), 0, "dynamicParent").description).toBe("Parent with child,plain");
    expect(counts).toEqual({ childEnabled: 1, childMap: 1, childDescription: 1, staticChildMap: 0 });
  });
});
