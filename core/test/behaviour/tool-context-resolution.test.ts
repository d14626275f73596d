import { setTimeout as delay } from "node:timers/promises";
import { defineAgent, defineTool } from "@pai/core";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { createTestRuntime } from "../support/test-runtime.js";
import { offeredTool, projectedPart, scripted } from "./_helpers.js";

const callTool = (toolName: string, toolCallId = "call-1") => ({
  toolCalls: [{ toolName, toolCallId, input: {} }],
});

describe("tool context resolution", () => {
  it("contextSchema is a type declaration only: a context it would reject or transform reaches execute unchanged", async () => {
    const seenByExecute: unknown[] = [];
    const seenByDescription: unknown[] = [];
    const scoped = defineTool({
      id: "test.context.unparsed.v1",
      // Zod would reject `tenant: 42`, turn `limit: "5"` into 5, add the `region` default and
      // strip `extra`, if the runtime parsed the context with this schema.
      contextSchema: z.object({
        tenant: z.string(),
        limit: z.string().transform(Number),
        region: z.string().default("eu"),
      }),
      inputSchema: z.object({}),
      description: ({ context }) => {
        seenByDescription.push(context);
        return "Scoped tool";
      },
      execute: ({ context }) => {
        seenByExecute.push(context);
        return null;
      },
    });
    const mapped = { tenant: 42, limit: "5", extra: "kept" };
    const t = await createTestRuntime({
      agent: defineAgent({
        tools: { scoped: { tool: scoped, mapContext: () => mapped as never } },
      }),
      model: [callTool("scoped"), { text: "Done." }],
    });
    const threadId = await t.createThread();
    const snapshot = await t.send(threadId, "go");

    expect(projectedPart(snapshot, "call-1")).toMatchObject({ state: "output-available" });
    expect(seenByExecute).toEqual([{ tenant: 42, limit: "5", extra: "kept" }]);
    expect(seenByExecute[0]).toBe(mapped);
    expect(seenByDescription.length).toBeGreaterThanOrEqual(1);
    for (const context of seenByDescription)
      expect(context).toEqual({ tenant: 42, limit: "5", extra: "kept" });
  });

  it("a context taken directly from the agent's runtimeContext is not parsed with contextSchema either", async () => {
    const seen: unknown[] = [];
    const direct = defineTool({
      id: "test.context.direct-unparsed.v1",
      contextSchema: z.object({ count: z.string().transform((value) => value.length) }),
      inputSchema: z.object({}),
      description: "Direct",
      execute: ({ context }) => {
        seen.push(context);
        return null;
      },
    });
    const t = await createTestRuntime({
      agent: defineAgent({
        runtimeContext: () => ({ count: "abc", other: true }) as unknown as { count: number },
        tools: { direct },
      }),
      model: [callTool("direct"), { text: "Done." }],
    });
    const threadId = await t.createThread();
    const snapshot = await t.send(threadId, "go");

    expect(projectedPart(snapshot, "call-1")).toMatchObject({ state: "output-available" });
    expect(seen).toEqual([{ count: "abc", other: true }]);
  });

  it("an async mapContext feeds the synchronous description callback and ctx.context", async () => {
    const executed: unknown[] = [];
    const formatPrice = defineTool({
      id: "test.context.async-map.v1",
      contextSchema: z.object({ currency: z.enum(["USD", "EUR"]) }),
      inputSchema: z.object({ amountCents: z.number().int() }),
      outputSchema: z.string(),
      description: ({ context }) => `Format a price in ${context.currency}. Supply the amount in cents.`,
      execute: ({ input, context }) => {
        executed.push(context);
        return `${(input.amountCents / 100).toFixed(2)} ${context.currency}`;
      },
    });
    const t = await createTestRuntime({
      agent: defineAgent({
        runtimeContext: () => ({ account: { currency: "EUR" as const } }),
        tools: {
          formatPrice: {
            tool: formatPrice,
            mapContext: async ({ runtimeContext }) => {
              await delay(5);
              return { currency: runtimeContext.account.currency };
            },
          },
        },
      }),
      model: [
        { toolCalls: [{ toolName: "formatPrice", toolCallId: "call-1", input: { amountCents: 1250 } }] },
        { text: "12.50 EUR." },
      ],
    });
    const threadId = await t.createThread();
    const snapshot = await t.send(threadId, "format 1250");

    for (const callIndex of [0, 1]) {
      expect(offeredTool(scripted(t), callIndex, "formatPrice").description).toBe(
        "Format a price in EUR. Supply the amount in cents.",
      );
    }
    expect(executed).toEqual([{ currency: "EUR" }]);
    expect(projectedPart(snapshot, "call-1")).toMatchObject({
      state: "output-available",
      output: "12.50 EUR",
    });
  });

  it("mapContext receives the request's identity and clientData, both when preparing descriptions and when executing", async () => {
    const seen: Array<Record<string, unknown>> = [];
    const scoped = defineTool({
      id: "test.context.map-args.v1",
      contextSchema: z.object({ tenant: z.string() }),
      inputSchema: z.object({}),
      outputSchema: z.string(),
      description: ({ context }) => `Work in ${context.tenant}`,
      execute: ({ context }) => context.tenant,
    });
    const t = await createTestRuntime({
      agent: defineAgent({
        runtimeContext: () => ({ app: "crm" }),
        tools: {
          scoped: {
            tool: scoped,
            mapContext: (args) => {
              seen.push({ ...args });
              return { tenant: (args.identity as { scopeKey: string }).scopeKey };
            },
          },
        },
      }),
      model: [callTool("scoped"), { text: "Done." }],
      identity: { scopeKey: "tenant-a", userKey: "u1", role: "admin" },
    });
    const threadId = await t.createThread();
    const snapshot = await t.send(threadId, "go", { clientData: { page: "/inbox" } });

    expect(offeredTool(scripted(t), 0, "scoped").description).toBe("Work in tenant-a");
    expect(projectedPart(snapshot, "call-1")).toMatchObject({ output: "tenant-a" });
    // One mapping per model step's description, one for the invocation.
    expect(seen.length).toBeGreaterThanOrEqual(3);
    for (const args of seen) {
      expect(args).toMatchObject({
        runtimeContext: { app: "crm" },
        identity: { scopeKey: "tenant-a", userKey: "u1", role: "admin" },
        clientData: { page: "/inbox" },
        threadId,
      });
      expect(args.signal).toBeInstanceOf(AbortSignal);
    }
  });

  it("a child registration's enabled and mapContext receive identity and clientData, with the parent's context as runtimeContext", async () => {
    const seen: Array<{ callback: string; args: Record<string, unknown> }> = [];
    const child = defineTool({
      id: "test.context.child-args.v1",
      contextSchema: z.object({ user: z.string() }),
      inputSchema: z.object({}),
      outputSchema: z.string(),
      description: "Child",
      execute: ({ context }) => context.user,
    });
    const parent = defineTool({
      id: "test.context.parent-args.v1",
      contextSchema: z.object({ tenant: z.string() }),
      inputSchema: z.object({}),
      description: "Parent",
      tools: {
        child: {
          tool: child,
          enabled: (args) => {
            seen.push({ callback: "enabled", args: { ...args } });
            return true;
          },
          mapContext: (args) => {
            seen.push({ callback: "mapContext", args: { ...args } });
            return { user: (args.identity as { userKey: string }).userKey };
          },
        },
      },
      execute: ({ tools }) => tools.child.execute({}),
    });
    const t = await createTestRuntime({
      agent: defineAgent({
        tools: { parent: { tool: parent, mapContext: () => ({ tenant: "acme" }) } },
      }),
      model: [callTool("parent"), { text: "Done." }],
      identity: { scopeKey: "tenant-b", userKey: "u2" },
    });
    const threadId = await t.createThread();
    const snapshot = await t.send(threadId, "go", { clientData: { locale: "de" } });

    expect(projectedPart(snapshot, "call-1")).toMatchObject({ state: "output-available", output: "u2" });
    expect(seen.map((entry) => entry.callback)).toEqual(["enabled", "mapContext"]);
    for (const { args } of seen) {
      expect(args).toMatchObject({
        runtimeContext: { tenant: "acme" },
        identity: { scopeKey: "tenant-b", userKey: "u2" },
        clientData: { locale: "de" },
        threadId,
      });
      expect(args.signal).toBeInstanceOf(AbortSignal);
    }
  });
});
