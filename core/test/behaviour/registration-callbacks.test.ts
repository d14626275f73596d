import { setTimeout as delay } from "node:timers/promises";
import { defineAgent, defineTool } from "@pai/core";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { createTestRuntime } from "../support/test-runtime.js";
import { projectedPart, scripted, toolNamesInCall, toolResultFor } from "./_helpers.js";

const lookup = defineTool({
  id: "test.registration-callbacks.lookup.v1",
  description: "Look something up",
  inputSchema: z.object({ q: z.string() }),
  outputSchema: z.object({ found: z.boolean() }),
  execute: () => ({ found: true }),
});

describe("async enabled resolvers", () => {
  it("a tool disabled by an async resolver is not offered; one enabled by an async resolver is", async () => {
    const resolved: string[] = [];
    const t = await createTestRuntime({
      agent: defineAgent({
        runtimeContext: () => ({ canLookup: false, canSearch: true }),
        tools: {
          lookup: {
            tool: lookup,
            enabled: async ({ runtimeContext }) => {
              await delay(5);
              resolved.push("lookup");
              return runtimeContext.canLookup;
            },
          },
          search: {
            tool: lookup,
            enabled: async ({ runtimeContext }) => {
              await delay(5);
              resolved.push("search");
              return runtimeContext.canSearch;
            },
          },
        },
      }),
      model: [{ text: "Hi." }],
    });
    const threadId = await t.createThread();
    await t.send(threadId, "hello");

    expect(toolNamesInCall(scripted(t), 0)).toEqual(["search"]);
    expect(resolved).toEqual(expect.arrayContaining(["lookup", "search"]));
  });

  it("a call to a tool an async resolver disables does not execute; one it enables does", async () => {
    const executed: string[] = [];
    const counted = (name: string) =>
      defineTool({
        id: `test.registration-callbacks.counted-${name}.v1`,
        description: "Counted",
        inputSchema: z.object({}),
        execute: () => {
          executed.push(name);
          return null;
        },
      });
    const state = { open: true };
    const t = await createTestRuntime({
      agent: defineAgent({
        tools: {
          closeGate: {
            tool: defineTool({
              id: "test.registration-callbacks.close-gate.v1",
              description: "Close the gate",
              inputSchema: z.object({}),
              execute: () => {
                state.open = false;
                return null;
              },
            }),
          },
          gated: {
            tool: counted("gated"),
            enabled: async () => {
              await delay(1);
              return state.open;
            },
          },
          open: { tool: counted("open"), enabled: async () => true },
        },
      }),
      model: [
        { toolCalls: [{ toolName: "closeGate", toolCallId: "call-close", input: {} }] },
        {
          toolCalls: [
            { toolName: "gated", toolCallId: "call-gated", input: {} },
            { toolName: "open", toolCallId: "call-open", input: {} },
          ],
        },
        { text: "Done." },
      ],
    });
    const threadId = await t.createThread();
    const snapshot = await t.send(threadId, "go");

    expect(toolNamesInCall(scripted(t), 0)).toEqual(["closeGate", "gated", "open"]);
    expect(toolNamesInCall(scripted(t), 1)).toEqual(["closeGate", "open"]);
    expect(executed).toEqual(["open"]);
    expect(projectedPart(snapshot, "call-gated").state).toBe("output-error");
    expect(projectedPart(snapshot, "call-open").state).toBe("output-available");
  });
});

describe("onOutput return values", () => {
  it.each([
    { label: "a value", observer: () => ({ revision: 999, injected: "yes" }) },
    {
      label: "a promise of a value",
      observer: async () => {
        await delay(1);
        return { revision: 999, injected: "yes" };
      },
    },
  ])(
    "an observer returning $label changes neither the stored nor the model-visible output",
    async ({ observer }) => {
      const openDocument = defineTool({
        id: "test.registration-callbacks.open-document.v1",
        description: "Open a document",
        inputSchema: z.object({ docId: z.string() }),
        outputSchema: z.object({ revision: z.number() }),
        execute: () => ({ revision: 7 }),
      });
      let observed = 0;
      const t = await createTestRuntime({
        agent: defineAgent({
          tools: {
            openDoc: {
              tool: openDocument,
              onOutput: (() => {
                observed++;
                return observer();
              }) as never,
            },
          },
        }),
        model: [
          { toolCalls: [{ toolName: "openDoc", toolCallId: "call-open", input: { docId: "d1" } }] },
          { text: "Opened." },
        ],
      });
      const threadId = await t.createThread();
      const snapshot = await t.send(threadId, "open d1");

      expect(observed).toBe(1);
      expect(projectedPart(snapshot, "call-open")).toMatchObject({
        state: "output-available",
        output: { revision: 7 },
      });
      const [stored] = await t.toolParts(threadId);
      expect(stored!.output).toEqual({ revision: 7 });
      expect(toolResultFor(scripted(t), 1, "call-open").output).toEqual({
        type: "json",
        value: { revision: 7 },
      });
      expect(snapshot.runs.at(-1)?.status).toBe("completed");
    },
  );
});
