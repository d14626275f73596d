import { defineAgent, defineTool, type RuntimeErrorReport } from "@pai/core";
import { scriptedModel } from "@pai/core/testing";
import { generateText } from "ai";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { createTestRuntime } from "../support/test-runtime.js";
import { projectedPart, scripted, toolNamesInCall, toolResultFor } from "./_helpers.js";

const report = defineTool({
  id: "test.child-policy.report.v1",
  description: "Read a regional report",
  inputSchema: z.object({ region: z.string() }),
  outputSchema: z.object({ amount: z.number() }),
  execute: ({ input }) => ({ amount: { north: 10, south: 32 }[input.region] ?? 0 }),
});

describe("child tool calls made through the AI SDK", () => {
  it("a child called by generateText gets a PAI-generated toolCallId, not the SDK's", async () => {
    const childLocations: Array<{ toolCallId: string; toolName: string }> = [];
    const hookCalls: Array<{ toolName: string; toolCallId: string; parent: unknown }> = [];
    const located = defineTool({
      id: "test.child-policy.located.v1",
      description: "Reports where it runs",
      inputSchema: z.object({ region: z.string() }),
      outputSchema: z.object({ toolCallId: z.string() }),
      execute: ({ thread }) => {
        childLocations.push({ toolCallId: thread.toolCallId, toolName: thread.toolName });
        return { toolCallId: thread.toolCallId };
      },
    });
    const parent = defineTool({
      id: "test.child-policy.sdk-parent.v1",
      description: "Lets an inner model call its child",
      inputSchema: z.object({}),
      tools: { located },
      execute: async ({ tools }) => {
        const inner = scriptedModel([
          { toolCalls: [{ toolName: "located", toolCallId: "sdk-inner-1", input: { region: "south" } }] },
        ]);
        const result = await generateText({ model: inner, tools, prompt: "where?" });
        return result.toolResults.map((toolResult) => toolResult.output);
      },
    });
    let ids = 0;
    const t = await createTestRuntime({
      agent: defineAgent({
        tools: { parent },
        lifecycle: {
          afterToolResult: ({ toolName, toolCallId, parent: caller }) => {
            hookCalls.push({ toolName, toolCallId, parent: caller });
          },
        },
      }),
      generateId: () => `pai-id-${++ids}`,
      model: [
        { toolCalls: [{ toolName: "parent", toolCallId: "call-parent", input: {} }] },
        { text: "Done." },
      ],
    });
    const threadId = await t.createThread();
    const snapshot = await t.send(threadId, "go");

    expect(childLocations).toHaveLength(1);
    const childId = childLocations[0]!.toolCallId;
    expect(childId).not.toBe("sdk-inner-1");
    expect(childId).toMatch(/^pai-id-\d+$/);
    expect(childLocations[0]!.toolName).toBe("located");
    expect(hookCalls).toEqual([
      { toolName: "located", toolCallId: childId, parent: { toolName: "parent", toolCallId: "call-parent" } },
      { toolName: "parent", toolCallId: "call-parent", parent: undefined },
    ]);
    expect(projectedPart(snapshot, "call-parent")).toMatchObject({
      state: "output-available",
      output: [{ toolCallId: childId }],
    });
  });
});

describe("registration policy of a definition registered both directly and as a child", () => {
  it("disabled on the agent, enabled as a child: the child call runs while the direct registration stays unavailable", async () => {
    let executions = 0;
    const counted = defineTool({
      id: "test.child-policy.counted.v1",
      description: "Counted report",
      inputSchema: z.object({ region: z.string() }),
      outputSchema: z.object({ amount: z.number() }),
      execute: () => {
        executions++;
        return { amount: 7 };
      },
    });
    const seenEnabled: boolean[] = [];
    const parent = defineTool({
      id: "test.child-policy.direct-disabled-parent.v1",
      description: "Parent",
      inputSchema: z.object({}),
      tools: { counted },
      execute: async ({ tools }) => {
        seenEnabled.push(tools.counted.enabled);
        return (await tools.counted.execute({ region: "north" })).amount;
      },
    });
    const t = await createTestRuntime({
      agent: defineAgent({
        tools: { counted: { tool: counted, enabled: false }, parent },
      }),
      model: [
        {
          toolCalls: [
            { toolName: "counted", toolCallId: "call-direct", input: { region: "north" } },
            { toolName: "parent", toolCallId: "call-parent", input: {} },
          ],
        },
        { text: "Done." },
      ],
    });
    const threadId = await t.createThread();
    const snapshot = await t.send(threadId, "go");

    expect(toolNamesInCall(scripted(t), 0)).toEqual(["parent"]);
    expect(seenEnabled).toEqual([true]);
    expect(projectedPart(snapshot, "call-parent")).toMatchObject({ state: "output-available", output: 7 });
    // The direct registration was not offered, so the model's call to it fails without executing.
    expect(projectedPart(snapshot, "call-direct")).toMatchObject({ state: "output-error" });
    // Only the child call executed.
    expect(executions).toBe(1);
  });

  it("enabled on the agent, disabled as a child: the direct call runs while the child reports enabled false and rejects", async () => {
    const outcomes: unknown[] = [];
    const parent = defineTool({
      id: "test.child-policy.child-disabled-parent.v1",
      description: "Parent",
      inputSchema: z.object({}),
      tools: { report: { tool: report, enabled: false } },
      execute: async ({ tools }) => {
        outcomes.push(tools.report.enabled);
        try {
          await tools.report.execute({ region: "north" });
          outcomes.push("ran");
        } catch {
          outcomes.push("rejected");
        }
        return null;
      },
    });
    const t = await createTestRuntime({
      agent: defineAgent({ tools: { report, parent } }),
      model: [
        {
          toolCalls: [
            { toolName: "report", toolCallId: "call-direct", input: { region: "south" } },
            { toolName: "parent", toolCallId: "call-parent", input: {} },
          ],
        },
        { text: "Done." },
      ],
    });
    const threadId = await t.createThread();
    const snapshot = await t.send(threadId, "go");

    expect(toolNamesInCall(scripted(t), 0)).toEqual(["parent", "report"]);
    expect(outcomes).toEqual([false, "rejected"]);
    expect(projectedPart(snapshot, "call-direct")).toMatchObject({
      state: "output-available",
      output: { amount: 32 },
    });
  });
  it("mapContext and onOutput also stay with their own registration", async () => {
    const observed: Array<{ registration: string; toolCallId: string; output: unknown }> = [];
    const regional = defineTool({
      id: "test.child-policy.regional.v1",
      description: "Reports its region",
      contextSchema: z.object({ region: z.string() }),
      inputSchema: z.object({}),
      outputSchema: z.string(),
      execute: ({ context }) => context.region,
    });
    const parent = defineTool({
      id: "test.child-policy.regional-parent.v1",
      description: "Parent",
      inputSchema: z.object({}),
      tools: {
        regional: {
          tool: regional,
          mapContext: () => ({ region: "from-child-registration" }),
          onOutput: ({ output, call }) =>
            void observed.push({ registration: "child", toolCallId: call.toolCallId, output }),
        },
      },
      execute: ({ tools }) => tools.regional.execute({}),
    });
    const t = await createTestRuntime({
      agent: defineAgent({
        tools: {
          regional: {
            tool: regional,
            mapContext: () => ({ region: "from-agent-registration" }),
            onOutput: ({ output, call }) =>
              void observed.push({ registration: "agent", toolCallId: call.toolCallId, output }),
          },
          parent,
        },
      }),
      model: [
        {
          toolCalls: [
            { toolName: "regional", toolCallId: "call-direct", input: {} },
            { toolName: "parent", toolCallId: "call-parent", input: {} },
          ],
        },
        { text: "Done." },
      ],
    });
    const threadId = await t.createThread();
    const snapshot = await t.send(threadId, "go");

    expect(projectedPart(snapshot, "call-direct").output).toBe("from-agent-registration");
    expect(projectedPart(snapshot, "call-parent").output).toBe("from-child-registration");
    expect(observed).toHaveLength(2);
    expect(observed).toEqual(
      expect.arrayContaining([
        { registration: "agent", toolCallId: "call-direct", output: "from-agent-registration" },
        { registration: "child", toolCallId: expect.any(String), output: "from-child-registration" },
      ]),
    );
    expect(observed.find((entry) => entry.registration === "child")!.toolCallId).not.toBe("call-direct");
  });
});

describe("child availability resolution failures", () => {
  it.each([
    {
      label: "throws",
      enabled: (): boolean => {
        throw new Error("permission service down");
      },
    },
    {
      label: "rejects",
      enabled: async (): Promise<boolean> => {
        throw new Error("permission service down");
      },
    },
  ])(
    "a child's enabled callback that $label keeps the parent's execute from starting; the parent call ends in output-error",
    async ({ enabled }) => {
      let parentEntered = 0;
      let childEntered = 0;
      const child = defineTool({
        id: "test.child-policy.guarded-child.v1",
        description: "Guarded",
        inputSchema: z.object({}),
        execute: () => {
          childEntered++;
          return null;
        },
      });
      const parent = defineTool({
        id: "test.child-policy.guarded-parent.v1",
        description: "Parent",
        inputSchema: z.object({}),
        tools: { child: { tool: child, enabled } },
        execute: async () => {
          parentEntered++;
          return "ran";
        },
      });
      const reports: RuntimeErrorReport[] = [];
      const t = await createTestRuntime({
        agent: defineAgent({ tools: { parent } }),
        model: [
          { toolCalls: [{ toolName: "parent", toolCallId: "call-parent", input: {} }] },
          { text: "Sorry." },
        ],
        onRuntimeError: (report) => void reports.push(report),
      });
      const threadId = await t.createThread();
      const snapshot = await t.send(threadId, "go");

      expect(parentEntered).toBe(0);
      expect(childEntered).toBe(0);
      const part = projectedPart(snapshot, "call-parent");
      expect(part.state).toBe("output-error");
      expect(part.errorText).toContain("permission service down");
      expect(toolResultFor(scripted(t), 1, "call-parent").output).toEqual({
        type: "error-text",
        value: part.errorText,
      });
      expect(snapshot.runs.at(-1)?.status).toBe("completed");
      expect(
        reports.some((report) =>
          String((report.error as Error)?.message).includes("permission service down"),
        ),
      ).toBe(true);
    },
  );
});
