import { defineCapability, definePlugin, PaiError, type RuntimeEvent } from "@pai/core";
import { memoryStorage } from "@pai/storage-memory";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { defineAgent } from "../../src/definitions/define-agent.js";
import { defineTool } from "../../src/definitions/define-tool.js";
import { createPai, scopeFromIdentity } from "../../src/pai/create-pai.js";
import { createTestRuntime } from "../support/test-runtime.js";

const echo = defineTool({
  id: "test.echo",
  description: "Echo the text.",
  inputSchema: z.object({ text: z.string() }),
  execute: ({ input }) => ({ echoed: input.text }),
});

const counter = defineCapability<{ next(): number }>()({ id: "test.counter" });

const count = defineTool({
  id: "test.count",
  description: "Count.",
  inputSchema: z.object({}),
  capabilities: { counter },
  execute: ({ capabilities }) => ({ value: capabilities.counter.next() }),
});

const counterPlugin = definePlugin({
  id: "test.counter-plugin",
  tools: { count },
  capabilities: {
    [counter.id]: {
      acquire: () => {
        let value = 0;
        return { next: () => ++value };
      },
    },
  },
});

const ownerOf = (error: unknown) =>
  PaiError.isInstance(error) ? `${error.code}: ${error.message}` : String(error);

describe("definePlugin", () => {
  it("normalizes tools and keeps a literal id", () => {
    const plugin = definePlugin({ id: "acme.one", tools: { echo } });
    expect(plugin.kind).toBe("plugin");
    expect(plugin.id).toBe("acme.one");
    expect(plugin.tools.echo.tool).toBe(echo);
    expect(Object.isFrozen(plugin)).toBe(true);
  });

  it("rejects bad ids, tools, bindings and hooks", () => {
    expect(() => definePlugin({ id: " " })).toThrow(/id must be a non-empty string/);
    expect(() => definePlugin({ id: "x", tools: { bad: {} as never } })).toThrow(
      /tools.bad is not a tool definition/,
    );
    expect(() => definePlugin({ id: "x", capabilities: { c: {} as never } })).toThrow(/needs an acquire/);
    expect(() => definePlugin({ id: "x", hooks: { onNothing: () => undefined } as never })).toThrow(
      /unknown hook "onNothing"/,
    );
  });
});

describe("plugins at createPai", () => {
  it("adds plugin tools and capability bindings to the agent and runs them", async () => {
    const agent = defineAgent({ tools: { echo } });
    const runtime = await createTestRuntime({
      agent,
      plugins: [counterPlugin],
      model: [
        { toolCalls: [{ toolName: "count", input: {}, toolCallId: "c1" }] },
        { toolCalls: [{ toolName: "count", input: {}, toolCallId: "c2" }] },
        { text: "done" },
      ],
    });
    const threadId = await runtime.createThread();
    await runtime.send(threadId, "count twice");
    const parts = await runtime.toolParts(threadId);
    expect(parts.map((part) => [part.toolCallId, part.state, part.output])).toEqual([
      ["c1", "output-available", { value: 1 }],
      ["c2", "output-available", { value: 2 }],
    ]);
    // The plugin tool is offered to the model next to the agent's own.
    const offered = (
      runtime.model as unknown as { calls: Array<{ tools?: Array<{ name: string }> }> }
    ).calls[0]?.tools
      ?.map((tool) => tool.name)
      .sort();
    expect(offered).toEqual(["count", "echo"]);
    // The merged agent is what `pai.agents` exposes; the original definition is untouched.
    expect(Object.keys(Object.values(runtime.pai.agents)[0]!.tools).sort()).toEqual(["count", "echo"]);
    expect(Object.keys(agent.tools)).toEqual(["echo"]);
    await runtime.close();
  });

  it("limits plugin tools to the agents it lists", () => {
    const plugin = definePlugin({ id: "acme.only-b", agents: ["b"], tools: { echo2: echo } });
    const pai = createPai({
      scope: scopeFromIdentity,
      storage: memoryStorage(),
      agents: { a: defineAgent({ tools: { echo } }), b: defineAgent({ tools: {} }) },
      plugins: [plugin],
    });
    expect(Object.keys(pai.agents.a.tools)).toEqual(["echo"]);
    expect(Object.keys(pai.agents.b.tools)).toEqual(["echo2"]);
    expect(() =>
      createPai({
        scope: scopeFromIdentity,
        storage: memoryStorage(),
        agents: { a: defineAgent({ tools: {} }) },
        plugins: [definePlugin({ id: "acme.ghost", agents: ["ghost"] })],
      }),
    ).toThrow(/lists agent "ghost", which is not registered/);
  });

  it("rejects conflicts at construction, naming both owners", () => {
    const storage = memoryStorage();
    const sameCapability = definePlugin({
      id: "test.other-counter",
      capabilities: { [counter.id]: { acquire: () => ({ next: () => 0 }) } },
    });
    let error: unknown;
    try {
      createPai({
        scope: scopeFromIdentity,
        storage,
        agents: { a: defineAgent({ tools: {} }) },
        plugins: [counterPlugin, sameCapability],
      });
    } catch (caught) {
      error = caught;
    }
    expect(ownerOf(error)).toMatch(
      /^INVALID_DEFINITION: .*"test\.counter".*plugin "test\.counter-plugin".*plugin "test\.other-counter"/,
    );

    expect(() =>
      createPai({
        scope: scopeFromIdentity,
        storage,
        agents: { a: defineAgent({ tools: {} }) },
        capabilities: { [counter.id]: { acquire: () => ({ next: () => 0 }) } },
        plugins: [counterPlugin],
      }),
    ).toThrow(/bound by both createAgentRuntime\(\{ capabilities \}\) and plugin "test\.counter-plugin"/);

    expect(() =>
      createPai({
        scope: scopeFromIdentity,
        storage,
        agents: { a: defineAgent({ tools: { echo } }) },
        plugins: [definePlugin({ id: "acme.echoes", tools: { echo } })],
      }),
    ).toThrow(/Tool "echo" of plugin "acme\.echoes" clashes with .* agent "a"/);

    expect(() =>
      createPai({
        scope: scopeFromIdentity,
        storage,
        agents: { a: defineAgent({ tools: {} }) },
        plugins: [
          definePlugin({ id: "acme.one", tools: { echo } }),
          definePlugin({ id: "acme.two", tools: { echo } }),
        ],
      }),
    ).toThrow(/Tool "echo" of plugin "acme\.two" clashes with .* plugin "acme\.one"/);

    expect(() =>
      createPai({
        scope: scopeFromIdentity,
        storage,
        agents: { a: defineAgent({ tools: {} }) },
        plugins: [counterPlugin, counterPlugin],
      }),
    ).toThrow(/registered twice/);
  });

  it("chains afterToolResult hooks by matcher, plugins before the agent's own hook", async () => {
    const seen: string[] = [];
    const rewrite = definePlugin({
      id: "acme.rewrite",
      hooks: {
        afterToolResult: {
          matcher: { toolName: "echo" },
          handler: ({ result, agentId }) => {
            seen.push(`plugin:${agentId}`);
            return result.type === "output" ? { type: "output", output: { rewritten: true } } : undefined;
          },
        },
      },
    });
    const agent = defineAgent({
      tools: { echo, other: echo },
      lifecycle: {
        afterToolResult: ({ name, result }) => {
          seen.push(`agent:${name}:${JSON.stringify(result)}`);
        },
      },
    });
    const runtime = await createTestRuntime({
      agent,
      plugins: [rewrite],
      model: [
        {
          toolCalls: [
            { toolName: "echo", input: { text: "a" }, toolCallId: "e1" },
            { toolName: "other", input: { text: "b" }, toolCallId: "o1" },
          ],
        },
        { text: "ok" },
      ],
    });
    const threadId = await runtime.createThread();
    await runtime.send(threadId, "go");
    const parts = await runtime.toolParts(threadId);
    expect(parts.find((part) => part.toolCallId === "e1")?.output).toEqual({ rewritten: true });
    expect(parts.find((part) => part.toolCallId === "o1")?.output).toEqual({ echoed: "b" });
    expect(seen.sort()).toEqual([
      'agent:echo:{"type":"output","output":{"rewritten":true}}',
      'agent:other:{"type":"output","output":{"echoed":"b"}}',
      "plugin:agent",
    ]);
    await runtime.close();
  });

  it("delivers runtime events to observers and matching plugin hooks; observer throws never break a run", async () => {
    const events: RuntimeEvent[] = [];
    const toolEnds: string[] = [];
    const errors: unknown[] = [];
    const approve = defineTool({
      id: "test.approve",
      description: "Needs approval.",
      inputSchema: z.object({}),
      suspend: { approval: { suspendSchema: z.object({}), resumeSchema: z.object({ ok: z.boolean() }) } },
      execute: (ctx) =>
        ctx.entry.type === "initial" ? ctx.suspend("approval", {}) : { ok: ctx.entry.resume.ok },
    });
    const watcher = definePlugin({
      id: "acme.watcher",
      hooks: {
        onToolEnd: {
          matcher: { toolName: ["approve"] },
          handler: (event) => void toolEnds.push(event.outcome),
        },
        onRunStart: () => {
          throw new Error("observer bug");
        },
      },
    });
    const runtime = await createTestRuntime({
      agent: defineAgent({ tools: { approve, echo } }),
      plugins: [watcher],
      observers: [(event) => void events.push(event)],
      onRuntimeError: (report) => errors.push(report.error),
      model: [
        {
          toolCalls: [
            { toolName: "approve", input: {}, toolCallId: "a1" },
            { toolName: "echo", input: { text: "x" }, toolCallId: "e1" },
          ],
        },
        { text: "done" },
      ],
    });
    const threadId = await runtime.createThread();
    await runtime.send(threadId, "go");
    await runtime.submit(threadId, "approve.approval", { ok: true });
    expect((await runtime.lastRun(threadId))?.status).toBe("completed");
    const summary = events.map((event) =>
      "toolCallId" in event ? `${event.type}:${event.toolCallId}` : event.type,
    );
    expect(summary[0]).toBe("run-start");
    expect(summary.slice(1, 4)).toEqual(["step-start", "model-start", "model-end"]);
    expect(summary).toContain("suspend:a1");
    expect(summary.indexOf("action-resolved:a1")).toBeGreaterThan(summary.indexOf("suspend:a1"));
    expect(summary.filter((entry) => entry === "tool-start:a1")).toHaveLength(2);
    expect(summary.at(-1)).toBe("run-end");
    const end = events.at(-1) as Extract<RuntimeEvent, { type: "run-end" }>;
    expect(end.status).toBe("completed");
    expect(toolEnds).toEqual(["suspended", "output"]);
    expect(errors.map((error) => (error as Error).message)).toEqual(["observer bug"]);
    await runtime.close();
  });
});
