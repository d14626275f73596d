import {
  type CapabilityAcquireContext,
  type CapabilityBinding,
  defineAgent,
  defineCapability,
  defineTool,
  PaiError,
} from "@pai/core";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { internalsOf } from "../../src/pai/internals.js";
import { createTestRuntime } from "../support/test-runtime.js";
import { deferred, eventually, projectedPart, scripted } from "./_helpers.js";

type Counter = { id: number; next(): number };

const counter = defineCapability<Counter>()({ id: "test.counter", description: "A per-thread counter" });

/** A binding that records every acquisition and release. */
function countingBinding(
  options: Partial<Pick<CapabilityBinding<Counter>, "lifetime" | "idleTimeoutMs">> = {},
) {
  const acquired: CapabilityAcquireContext[] = [];
  const released: Array<{ facade: Counter; resourceKey: string }> = [];
  let made = 0;
  const binding: CapabilityBinding<Counter> = {
    ...options,
    acquire: (context) => {
      acquired.push(context);
      let value = 0;
      return { id: ++made, next: () => ++value };
    },
    release: (facade, context) => {
      released.push({ facade, resourceKey: context.resourceKey });
    },
  };
  return { binding, acquired, released };
}

const tick = defineTool({
  id: "test.capabilities.tick.v1",
  description: "Advance the counter",
  inputSchema: z.object({}),
  outputSchema: z.object({ facade: z.number(), value: z.number() }),
  capabilities: { counter },
  execute: (ctx) => ({ facade: ctx.capabilities.counter.id, value: ctx.capabilities.counter.next() }),
});

const tickTwiceThenStop = [
  {
    toolCalls: [
      { toolName: "tick", toolCallId: "c1", input: {} },
      { toolName: "tick", toolCallId: "c2", input: {} },
    ],
  },
  { toolCalls: [{ toolName: "tick", toolCallId: "c3", input: {} }] },
  { text: "Done." },
];

describe("capabilities", () => {
  it("a missing binding fails at runtime construction naming the tool and the capability", async () => {
    const agent = defineAgent({ tools: { tick } });
    const error = await createTestRuntime({ agent, model: [] }).then(
      () => undefined,
      (caught: unknown) => caught,
    );
    expect(PaiError.isInstance(error)).toBe(true);
    expect((error as PaiError).code).toBe("INVALID_DEFINITION");
    expect((error as PaiError).message).toContain('"tick"');
    expect((error as PaiError).message).toContain("test.counter");
  });

  it("a child tool's missing binding also fails construction, naming the parent and the child", async () => {
    const parent = defineTool({
      id: "test.capabilities.parent.v1",
      description: "Parent",
      inputSchema: z.object({}),
      tools: { tick },
      execute: () => null,
    });
    const error = await createTestRuntime({ agent: defineAgent({ tools: { parent } }), model: [] }).then(
      () => undefined,
      (caught: unknown) => caught as PaiError,
    );
    expect(error?.code).toBe("INVALID_DEFINITION");
    expect(error?.message).toContain("parent.tick");
    expect(error?.message).toContain("test.counter");
  });

  it("a thread capability is acquired once per thread, shared by its calls and released at run end", async () => {
    const { binding, acquired, released } = countingBinding();
    const t = await createTestRuntime({
      agent: defineAgent({ tools: { tick } }),
      capabilities: { "test.counter": binding },
      model: tickTwiceThenStop,
    });
    const threadId = await t.createThread();
    const snapshot = await t.send(threadId, "tick");

    expect(acquired).toHaveLength(1);
    expect(acquired[0]).toMatchObject({ capabilityId: "test.counter", scopeKey: "test-scope", threadId });
    const outputs = ["c1", "c2", "c3"].map((id) => projectedPart(snapshot, id).output);
    expect(outputs.map((output) => output.facade)).toEqual([1, 1, 1]);
    expect(outputs.map((output) => output.value).sort()).toEqual([1, 2, 3]);
    expect(released).toHaveLength(1);
    expect(released[0]!.facade.id).toBe(1);
    expect(internalsOf(t.pai).capabilities.size).toBe(0);
  });

  it("with idleTimeoutMs the facade survives the run, is reused by the next run and released after the idle time", async () => {
    const { binding, acquired, released } = countingBinding({ idleTimeoutMs: 150 });
    const t = await createTestRuntime({
      agent: defineAgent({ tools: { tick } }),
      capabilities: { "test.counter": binding },
      model: [
        { toolCalls: [{ toolName: "tick", toolCallId: "c1", input: {} }] },
        { text: "One." },
        { toolCalls: [{ toolName: "tick", toolCallId: "c2", input: {} }] },
        { text: "Two." },
      ],
    });
    const threadId = await t.createThread();
    await t.send(threadId, "tick");
    expect(released).toHaveLength(0);
    const second = await t.send(threadId, "tick again");

    expect(acquired).toHaveLength(1);
    expect(projectedPart(second, "c2").output).toEqual({ facade: 1, value: 2 });
    expect(released).toHaveLength(0);
    await eventually(() => released.length === 1, 2_000);
    expect(internalsOf(t.pai).capabilities.size).toBe(0);
  });

  it("closing the runtime releases facades that are still held", async () => {
    const { binding, released } = countingBinding({ idleTimeoutMs: 60_000 });
    const t = await createTestRuntime({
      agent: defineAgent({ tools: { tick } }),
      capabilities: { "test.counter": binding },
      model: [{ toolCalls: [{ toolName: "tick", toolCallId: "c1", input: {} }] }, { text: "One." }],
    });
    const threadId = await t.createThread();
    await t.send(threadId, "tick");
    expect(released).toHaveLength(0);

    await t.close();
    expect(released).toHaveLength(1);
  });

  it('lifetime "call" acquires and releases around each call', async () => {
    const { binding, acquired, released } = countingBinding({ lifetime: "call" });
    const t = await createTestRuntime({
      agent: defineAgent({ tools: { tick } }),
      capabilities: { "test.counter": binding },
      model: tickTwiceThenStop,
    });
    const threadId = await t.createThread();
    const snapshot = await t.send(threadId, "tick");

    expect(acquired).toHaveLength(3);
    expect(released).toHaveLength(3);
    expect(["c1", "c2", "c3"].map((id) => projectedPart(snapshot, id).output.value)).toEqual([1, 1, 1]);
  });

  it("the ctx name is aliasable: { box: token } reads as ctx.capabilities.box", async () => {
    const { binding } = countingBinding();
    const aliased = defineTool({
      id: "test.capabilities.aliased.v1",
      description: "Uses an alias",
      inputSchema: z.object({}),
      capabilities: { box: counter },
      execute: (ctx) => ({ names: Object.keys(ctx.capabilities), value: ctx.capabilities.box.next() }),
    });
    const t = await createTestRuntime({
      agent: defineAgent({ tools: { aliased } }),
      capabilities: { "test.counter": binding },
      model: [{ toolCalls: [{ toolName: "aliased", toolCallId: "c1", input: {} }] }, { text: "Ok." }],
    });
    const threadId = await t.createThread();
    const snapshot = await t.send(threadId, "go");
    expect(projectedPart(snapshot, "c1").output).toEqual({ names: ["box"], value: 1 });
  });

  it("resource keys differ across scopes even when the thread id is the same", async () => {
    const { binding, acquired } = countingBinding();
    const runtimes = await Promise.all(
      ["tenant-a", "tenant-b"].map((scopeKey) =>
        createTestRuntime({
          agent: defineAgent({ tools: { tick } }),
          capabilities: { "test.counter": binding },
          identity: { scopeKey, userKey: "u" },
          model: [{ toolCalls: [{ toolName: "tick", toolCallId: "c1", input: {} }] }, { text: "Ok." }],
        }),
      ),
    );
    for (const t of runtimes) {
      await t.createThread({ threadId: "thread-1" });
      await t.send("thread-1", "tick");
    }

    expect(acquired.map((context) => [context.scopeKey, context.threadId])).toEqual([
      ["tenant-a", "thread-1"],
      ["tenant-b", "thread-1"],
    ]);
    expect(acquired[0]!.resourceKey).not.toBe(acquired[1]!.resourceKey);
  });

  it("acquisition honours the signal: cancelling the run aborts it and the tool never runs", async () => {
    const acquiring = deferred();
    let abortedAcquire = false;
    let executed = false;
    const binding: CapabilityBinding<Counter> = {
      acquire: ({ signal }) =>
        new Promise<Counter>((_resolve, reject) => {
          signal.addEventListener(
            "abort",
            () => {
              abortedAcquire = true;
              reject(signal.reason);
            },
            { once: true },
          );
          acquiring.resolve();
        }),
    };
    const guarded = defineTool({
      id: "test.capabilities.guarded.v1",
      description: "Guarded",
      inputSchema: z.object({}),
      capabilities: { counter },
      execute: () => {
        executed = true;
        return null;
      },
    });
    const t = await createTestRuntime({
      agent: defineAgent({ tools: { guarded } }),
      capabilities: { "test.counter": binding },
      model: [{ toolCalls: [{ toolName: "guarded", toolCallId: "c1", input: {} }] }],
    });
    const threadId = await t.createThread();
    await t.pai.service.threads.send({ identity: t.identity, threadId, message: { text: "go" } });
    await acquiring.promise;
    await t.pai.service.threads.cancel({ identity: t.identity, threadId });
    await t.waitForIdle(threadId);

    expect(abortedAcquire).toBe(true);
    expect(executed).toBe(false);
    expect(projectedPart(await t.snapshot(threadId), "c1")).toMatchObject({
      state: "output-error",
      cancelled: true,
    });
  });

  it("an acquisition failure becomes a tool error and the run continues", async () => {
    let executed = false;
    const binding: CapabilityBinding<Counter> = {
      acquire: () => {
        throw new Error("No sandbox quota left.");
      },
    };
    const guarded = defineTool({
      id: "test.capabilities.quota.v1",
      description: "Needs quota",
      inputSchema: z.object({}),
      capabilities: { counter },
      execute: () => {
        executed = true;
        return null;
      },
    });
    const t = await createTestRuntime({
      onRuntimeError: () => undefined,
      agent: defineAgent({ tools: { guarded } }),
      capabilities: { "test.counter": binding },
      model: [{ toolCalls: [{ toolName: "guarded", toolCallId: "c1", input: {} }] }, { text: "No quota." }],
    });
    const threadId = await t.createThread();
    const snapshot = await t.send(threadId, "go");

    expect(executed).toBe(false);
    const part = projectedPart(snapshot, "c1");
    expect(part.state).toBe("output-error");
    expect(part.errorText).toContain("No sandbox quota left.");
    expect(snapshot.runs.at(-1)?.status).toBe("completed");
    expect(scripted(t).calls).toHaveLength(2);
  });

  it("only tools that actually run acquire: preparation, disabled tools and invalid input do not", async () => {
    const { binding, acquired } = countingBinding();
    const t = await createTestRuntime({
      agent: defineAgent({
        tools: {
          tick,
          tickTyped: defineTool({
            id: "test.capabilities.typed.v1",
            description: ({ context }) => `Typed ${String(context)}`,
            inputSchema: z.object({ n: z.number() }),
            capabilities: { counter },
            execute: () => null,
          }),
          off: { tool: tick, enabled: false },
        },
      }),
      capabilities: { "test.counter": binding },
      model: [
        {
          toolCalls: [
            { toolName: "off", toolCallId: "c1", input: {} },
            { toolName: "tickTyped", toolCallId: "c2", input: { n: "not a number" } },
          ],
        },
        { text: "Nothing ran." },
      ],
    });
    const threadId = await t.createThread();
    await t.send(threadId, "go");
    expect(acquired).toHaveLength(0);
  });
});
