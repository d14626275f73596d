import { createPai, defineAgent, defineTool, normalizeJson, type RuntimeErrorReport } from "@pai/core";
import { scriptedModel } from "@pai/core/testing";
import { memoryStorage } from "@pai/storage-memory";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { createTestRuntime } from "../support/test-runtime.js";
import { rejection } from "./_helpers.js";

/** `{ a: { a: ... { a: 1 } } }`, `depth` objects deep. */
function nested(depth: number): unknown {
  let value: unknown = 1;
  for (let index = 0; index < depth; index++) value = { a: value };
  return value;
}

const approve = defineTool({
  id: "test.fail-closed.approve.v1",
  description: "Ask for approval",
  inputSchema: z.object({ summary: z.string() }),
  outputSchema: z.object({ approved: z.boolean() }),
  suspend: {
    approval: {
      suspendSchema: z.object({ prompt: z.string() }),
      resumeSchema: z.object({ approved: z.boolean() }).passthrough(),
    },
  },
  execute: (ctx: any) =>
    ctx.entry.type === "initial"
      ? ctx.suspend("approval", { prompt: ctx.input.summary })
      : { approved: true },
});

const callApprove = {
  toolCalls: [{ toolName: "approve", toolCallId: "call-1", input: { summary: "Ship" } }],
};

describe("scope: no silent shared tenant", () => {
  it("refuses a request whose identity yields no scope instead of sharing a default one", async () => {
    // A JavaScript host (no types to stop it) that forgot `scope`, with identities lacking scopeKey.
    const pai = (createPai as (options: unknown) => ReturnType<typeof createPai>)({
      agents: { main: defineAgent({ tools: {} }) },
      storage: memoryStorage(),
      model: scriptedModel([]),
    });
    for (const identity of [{ userId: "ann" }, null, undefined, { scopeKey: "" }, { scopeKey: 7 }]) {
      const error = await rejection(pai.service.threads.list({ identity } as never));
      expect(error.code).toBe("FORBIDDEN");
      expect(error.message).toContain("scope");
    }
    await expect(pai.service.threads.create({ identity: { userId: "ann" } } as never)).rejects.toMatchObject({
      code: "FORBIDDEN",
    });
    await pai.close();
  });

  it("refuses a scope function that returns no scopeKey", async () => {
    const pai = createPai({
      agents: { main: defineAgent({ tools: {} }) },
      storage: memoryStorage(),
      scope: (user: { org?: string }) => ({ scopeKey: user.org as string }),
    });
    expect((await rejection(pai.service.threads.list({ identity: {} }))).code).toBe("FORBIDDEN");
    await pai.close();
  });

  it("keeps two users of different scopes apart, and a single-tenant app says so explicitly", async () => {
    const pai = createPai({
      agents: { main: defineAgent({ tools: {} }) },
      storage: memoryStorage(),
      scope: (user: { id: string; org: string }) => ({ scopeKey: user.org, userKey: user.id }),
    });
    const ann = { id: "ann", org: "acme" };
    const bob = { id: "bob", org: "globex" };
    const thread = await pai.service.threads.create({ identity: ann, title: "ann's" });
    expect((await pai.service.threads.list({ identity: bob })).items).toEqual([]);
    expect(
      (await rejection(pai.service.threads.get({ identity: bob, threadId: thread.threadId }))).code,
    ).toBe("NOT_FOUND");
    await pai.close();

    const single = createPai({
      agents: { main: defineAgent({ tools: {} }) },
      storage: memoryStorage(),
      scope: () => ({ scopeKey: "app" }),
    });
    await single.service.threads.create({ identity: "anyone" });
    expect((await single.service.threads.list({ identity: "someone else" })).items).toHaveLength(1);
    await single.close();
  });
});

describe("hostile JSON is refused before anything is written", () => {
  it("refuses metadata nested deeper than the limit, naming the path, and writes no thread", async () => {
    const t = await createTestRuntime({ agent: defineAgent({ tools: {} }), model: [] });
    const error = await rejection(
      t.pai.service.threads.create({ identity: t.identity, metadata: nested(2_000) as never }),
    );
    expect(error.code).toBe("INVALID_INPUT");
    expect(error.message).toContain("64 levels");
    expect(error.message).toMatch(/\$\.a\.a\.a/);
    expect(error.issues?.[0]?.path.length).toBe(64);
    expect((await t.pai.service.threads.list({ identity: t.identity })).items).toEqual([]);
    // A value at the limit is fine, and the whole scope still lists.
    await t.pai.service.threads.create({ identity: t.identity, metadata: nested(63) as never });
    expect((await t.pai.service.threads.list({ identity: t.identity })).items).toHaveLength(1);
    await t.close();
  });

  it("honours a configured depth limit", async () => {
    const t = await createTestRuntime({
      agent: defineAgent({ tools: {} }),
      model: [],
      jsonLimits: { maxDepth: 4 },
    });
    const error = await rejection(
      t.pai.service.threads.create({ identity: t.identity, metadata: nested(5) as never }),
    );
    expect(error.message).toContain("4 levels");
    await t.close();
  });

  it("refuses __proto__, constructor and prototype keys in metadata, payloads and clientData", async () => {
    const t = await createTestRuntime({ agent: defineAgent({ tools: { approve } }), model: [callApprove] });
    for (const key of ["__proto__", "constructor", "prototype"]) {
      const metadata = JSON.parse(`{"ok":1,"deep":{"${key}":{"polluted":true}}}`);
      const error = await rejection(t.pai.service.threads.create({ identity: t.identity, metadata }));
      expect(error.code).toBe("INVALID_INPUT");
      expect(error.message).toContain(`$.deep.${key}`);
    }
    const threadId = await t.createThread();
    const sent = await rejection(
      t.pai.service.threads.send({
        identity: t.identity,
        threadId,
        message: { text: "hi" },
        clientData: JSON.parse('{"__proto__":{"admin":true}}'),
      }),
    );
    expect(sent.code).toBe("INVALID_INPUT");
    expect((await t.snapshot(threadId)).messages).toEqual([]);

    await t.send(threadId, "ship");
    const action = await t.action(threadId, "approve.approval");
    const before = await t.snapshot(threadId);
    const submitted = await rejection(
      t.pai.service.actions.submit({
        identity: t.identity,
        threadId,
        actionId: action.actionId,
        payload: JSON.parse('{"approved":true,"__proto__":{"admin":true}}'),
      }),
    );
    expect(submitted.code).toBe("INVALID_INPUT");
    expect(submitted.message).toContain("__proto__");
    expect((await t.snapshot(threadId)).thread.version).toBe(before.thread.version);
    expect((await t.action(threadId, "approve.approval")).state).toBe("pending");
    await t.close();
  });

  it("refuses tool data and suspend data with forbidden keys instead of dropping them", async () => {
    const writer = defineTool({
      id: "test.fail-closed.writer.v1",
      description: "Writes data",
      inputSchema: z.object({}),
      dataSchemas: { info: z.record(z.string(), z.unknown()) },
      execute: async (ctx: any) => {
        await ctx.data.write("info", JSON.parse('{"__proto__":{"x":1}}'));
        return "written";
      },
    });
    const t = await createTestRuntime({
      agent: defineAgent({ tools: { writer } }),
      model: [{ toolCalls: [{ toolName: "writer", toolCallId: "w1", input: {} }] }, { text: "done" }],
    });
    const threadId = await t.createThread();
    await t.send(threadId, "write");
    const [part] = await t.toolParts(threadId);
    expect(part?.state).toBe("output-error");
    expect(String(part?.errorText)).toContain("__proto__");
    await t.close();
  });

  it("stops at the depth limit without walking the rest of a 100,000-deep value", () => {
    let visitedBelowLimit = false;
    let value: unknown = {
      get trap() {
        visitedBelowLimit = true;
        return 1;
      },
    };
    for (let index = 0; index < 100_000; index++) value = { a: value };
    expect(() => normalizeJson(value, "Deep")).toThrow(/deeper than the limit of 64 levels/);
    expect(visitedBelowLimit).toBe(false);
    // A wide value is walked once and kept whole.
    const wide = Object.fromEntries(Array.from({ length: 200_000 }, (_, index) => [`k${index}`, index]));
    expect(Object.keys(normalizeJson(wide, "Wide", { maxSize: 64 * 1024 * 1024 }) as object)).toHaveLength(
      200_000,
    );
  });
});

describe("integers and ids", () => {
  it("refuses a watch version beyond what storage holds", async () => {
    const t = await createTestRuntime({ agent: defineAgent({ tools: {} }), model: [] });
    const threadId = await t.createThread();
    for (const afterVersion of [2_147_483_648, -1, 1.5, Number.MAX_SAFE_INTEGER]) {
      const iterator = t.pai.service.threads
        .watch({ identity: t.identity, threadId, afterVersion })
        [Symbol.asyncIterator]();
      const error = await rejection(iterator.next());
      expect(error.code).toBe("INVALID_INPUT");
      expect(error.message).toContain("afterVersion");
    }
    await t.close();
  });

  it("threads.create takes no client-chosen id, so another scope's id is no oracle", async () => {
    const t = await createTestRuntime({ agent: defineAgent({ tools: {} }), model: [] });
    const error = await rejection(
      t.pai.service.threads.create({ identity: t.identity, threadId: "chosen" } as never),
    );
    expect(error.code).toBe("INVALID_INPUT");
    expect(error.message).toContain("trusted.createThread");
    const created = await t.pai.trusted.createThread({
      scope: { scopeKey: "test-scope" },
      threadId: "chosen",
    });
    expect(created.threadId).toBe("chosen");
    await t.close();
  });
});

describe("errors never leak internals", () => {
  it("answers an unexpected failure with INTERNAL and a correlation id that onRuntimeError receives", async () => {
    const reports: RuntimeErrorReport[] = [];
    const inner = memoryStorage();
    const storage = {
      ...inner,
      listThreads: async () => {
        throw new Error('relation "pai_threads" does not exist (db.internal:5432)');
      },
    };
    const t = await createTestRuntime({
      agent: defineAgent({ tools: {} }),
      model: [],
      storage,
      onRuntimeError: (report) => void reports.push(report),
    });
    const error = await rejection(t.pai.service.threads.list({ identity: t.identity }));
    expect(error.code).toBe("INTERNAL");
    expect(error.message).not.toContain("db.internal");
    expect(error.stack ?? "").not.toContain("db.internal");
    const correlationId = error.details?.correlationId as string;
    expect(error.message).toContain(correlationId);
    expect(reports).toEqual([
      expect.objectContaining({ phase: "request", correlationId, operation: "threads.list" }),
    ]);
    expect(String((reports[0]?.error as Error | undefined)?.message)).toContain("db.internal");
    await t.close();
  });
});

describe("actions.submit with the action's name", () => {
  it("refuses a name that is not the action's, and accepts the right one", async () => {
    const t = await createTestRuntime({
      agent: defineAgent({ tools: { approve } }),
      model: [callApprove, { text: "done" }],
    });
    const threadId = await t.createThread();
    await t.send(threadId, "ship");
    const action = await t.action(threadId, "approve.approval");
    const base = { identity: t.identity, threadId, actionId: action.actionId, payload: { approved: true } };
    const wrong = await rejection(t.pai.service.actions.submit({ ...base, name: "approve.other" }));
    expect(wrong.code).toBe("INVALID_INPUT");
    expect(wrong.message).toContain("approve.approval");
    expect((await t.action(threadId, "approve.approval")).state).toBe("pending");
    const result = await t.pai.service.actions.submit({ ...base, name: "approve.approval" });
    expect(result.action.state).toBe("submitted");
    await t.close();
  });
});
