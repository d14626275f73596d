import { createAgentRuntime, createPai, defineAgent, defineTool, scopeFromIdentity } from "@pai/core";
import { scriptedModel } from "@pai/core/testing";
import { memoryStorage } from "@pai/storage-memory";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { deferred, eventually, projectedPart } from "./_helpers.js";

const identity = { scopeKey: "tenant-a", userKey: "alice" };

describe("subagents", () => {
  it("ctx.agents runs another registered agent on a fresh thread of the same scope and returns its answer", async () => {
    const agentIds: string[] = [];
    const whoAmI = defineTool({
      id: "test.subagents.who-am-i.v1",
      description: "Report the executing agent",
      inputSchema: z.object({}),
      execute: (ctx) => {
        agentIds.push(ctx.agentId);
        return ctx.agentId;
      },
    });
    const delegate = defineTool({
      id: "test.subagents.delegate.v1",
      description: "Ask the researcher",
      inputSchema: z.object({ question: z.string() }),
      execute: async (ctx) => {
        agentIds.push(ctx.agentId);
        return ctx.agents.run({ agentId: "researcher", prompt: ctx.input.question });
      },
    });
    const researcherModel = scriptedModel([
      { toolCalls: [{ toolName: "whoAmI", toolCallId: "r-1", input: {} }] },
      { text: "Paris." },
    ]);
    const mainModel = scriptedModel([
      { toolCalls: [{ toolName: "delegate", toolCallId: "m-1", input: { question: "Capital of France?" } }] },
      { text: "The researcher says Paris." },
    ]);
    const pai = createPai({
      scope: scopeFromIdentity,
      storage: memoryStorage(),
      agents: {
        main: defineAgent({ model: mainModel, tools: { delegate } }),
        researcher: defineAgent({ model: researcherModel, tools: { whoAmI } }),
      },
    });
    const thread = await pai.service.threads.create({ identity, agentId: "main" });
    await pai.service.threads.send({ identity, threadId: thread.threadId, message: { text: "ask" } });
    await pai.waitForIdle(thread.threadId);

    const snapshot = await pai.service.threads.get({ identity, threadId: thread.threadId });
    const output = projectedPart(snapshot, "m-1").output as {
      threadId: string;
      status: string;
      text: string;
    };
    expect(output).toMatchObject({ status: "completed", text: "Paris." });
    expect(output.threadId).not.toBe(thread.threadId);
    expect(agentIds).toEqual(["main", "researcher"]);
    expect(JSON.stringify(researcherModel.calls[0]!.prompt)).toContain("Capital of France?");

    const child = await pai.service.threads.get({ identity, threadId: output.threadId });
    expect(child.thread).toMatchObject({
      agentId: "researcher",
      scopeKey: "tenant-a",
      userKey: "alice",
      metadata: { parentThreadId: thread.threadId },
    });
    const otherScope = await pai.service.threads
      .get({ identity: { scopeKey: "tenant-b" }, threadId: output.threadId })
      .then(
        () => "visible",
        (error: { code?: string }) => error.code,
      );
    expect(otherScope).toBe("NOT_FOUND");
    await pai.close();
  });

  it('ctx.agentId is the agent\'s own name under createAgentRuntime, or "agent" when it has none', async () => {
    const seen: string[] = [];
    const whoAmI = defineTool({
      id: "test.subagents.name.v1",
      description: "Report the executing agent",
      inputSchema: z.object({}),
      execute: (ctx) => void seen.push(ctx.agentId),
    });
    for (const name of ["support-bot", undefined]) {
      const pai = createAgentRuntime({
        scope: scopeFromIdentity,
        storage: memoryStorage(),
        model: scriptedModel([{ toolCalls: [{ toolName: "whoAmI", input: {} }] }, { text: "ok" }]),
        agent: defineAgent({ ...(name ? { name } : {}), tools: { whoAmI } }),
      });
      const thread = await pai.service.threads.create({ identity });
      await pai.service.threads.send({ identity, threadId: thread.threadId, message: { text: "who?" } });
      await pai.waitForIdle(thread.threadId);
      await pai.close();
    }
    expect(seen).toEqual(["support-bot", "agent"]);
  });

  it("an unknown agent id is reported to the calling tool as NOT_FOUND", async () => {
    let code: string | undefined;
    const delegate = defineTool({
      id: "test.subagents.unknown.v1",
      description: "Ask someone who does not exist",
      inputSchema: z.object({}),
      execute: async (ctx) => {
        try {
          await ctx.agents.run({ agentId: "nobody", prompt: "hi" });
        } catch (error) {
          code = (error as { code?: string }).code;
        }
        return null;
      },
    });
    const pai = createPai({
      scope: scopeFromIdentity,
      storage: memoryStorage(),
      model: scriptedModel([{ toolCalls: [{ toolName: "delegate", input: {} }] }, { text: "ok" }]),
      agents: { main: defineAgent({ tools: { delegate } }) },
    });
    const thread = await pai.service.threads.create({ identity });
    await pai.service.threads.send({ identity, threadId: thread.threadId, message: { text: "go" } });
    await pai.waitForIdle(thread.threadId);
    expect(code).toBe("NOT_FOUND");
    await pai.close();
  });

  it("ctx.agents can continue an earlier thread of that agent, but not one of another scope", async () => {
    const results: Array<{ threadId?: string; text?: string; code?: string }> = [];
    const delegate = defineTool({
      id: "test.subagents.continue.v1",
      description: "Ask the researcher, continuing a thread when given one",
      inputSchema: z.object({ threadId: z.string().optional() }),
      execute: async (ctx) => {
        try {
          const answer = await ctx.agents.run({
            agentId: "researcher",
            prompt: "And Germany?",
            ...(ctx.input.threadId ? { threadId: ctx.input.threadId } : {}),
          });
          results.push({ threadId: answer.threadId, text: answer.text });
        } catch (error) {
          results.push({ code: (error as { code?: string }).code });
        }
        return null;
      },
    });
    const researcherModel = scriptedModel([{ text: "Paris." }, { text: "Berlin." }]);
    // Inputs of the main agent's successive delegate calls.
    const pending: Array<{ threadId?: string }> = [{}];
    const storage = memoryStorage();
    const pai = createPai({
      scope: scopeFromIdentity,
      storage,
      agents: {
        main: defineAgent({
          model: scriptedModel((_call, index) =>
            index % 2 === 1
              ? { text: "ok" }
              : { toolCalls: [{ toolName: "delegate", input: pending.shift() }] },
          ),
          tools: { delegate },
        }),
        researcher: defineAgent({ model: researcherModel, tools: {} }),
      },
    });
    const thread = await pai.service.threads.create({ identity, agentId: "main" });
    await pai.service.threads.send({ identity, threadId: thread.threadId, message: { text: "first" } });
    await pai.waitForIdle(thread.threadId);
    const childThreadId = results[0]!.threadId!;

    pending.push({ threadId: childThreadId });
    await pai.service.threads.send({ identity, threadId: thread.threadId, message: { text: "again" } });
    await pai.waitForIdle(thread.threadId);
    expect(results[1]).toEqual({ threadId: childThreadId, text: "Berlin." });
    // The continued run saw the earlier exchange.
    expect(JSON.stringify(researcherModel.calls[1]!.prompt)).toContain("Paris.");

    const otherTenant = { scopeKey: "tenant-b", userKey: "eve" };
    const foreign = await pai.service.threads.create({ identity: otherTenant, agentId: "main" });
    pending.push({ threadId: childThreadId });
    await pai.service.threads.send({
      identity: otherTenant,
      threadId: foreign.threadId,
      message: { text: "x" },
    });
    await pai.waitForIdle(foreign.threadId);
    expect(results[2]).toEqual({ code: "NOT_FOUND" });
    await pai.close();
  });

  it("cancelling the parent run cancels the subagent's run and aborts its tools", async () => {
    const childStarted = deferred();
    let childAborted = false;
    let childThreadId: string | undefined;
    const stall = defineTool({
      id: "test.subagents.stall.v1",
      description: "Wait until cancelled",
      inputSchema: z.object({}),
      execute: (ctx) =>
        new Promise((_resolve, reject) => {
          childThreadId = ctx.thread.threadId;
          ctx.signal.addEventListener(
            "abort",
            () => {
              childAborted = true;
              reject(ctx.signal.reason);
            },
            { once: true },
          );
          childStarted.resolve();
        }),
    });
    const delegate = defineTool({
      id: "test.subagents.delegate-stall.v1",
      description: "Delegate",
      inputSchema: z.object({}),
      execute: async (ctx) => ctx.agents.run({ agentId: "worker", prompt: "work" }),
    });
    const pai = createPai({
      scope: scopeFromIdentity,
      storage: memoryStorage(),
      onRuntimeError: () => undefined,
      agents: {
        main: defineAgent({
          model: scriptedModel([{ toolCalls: [{ toolName: "delegate", toolCallId: "m-1", input: {} }] }]),
          tools: { delegate },
        }),
        worker: defineAgent({
          model: scriptedModel([{ toolCalls: [{ toolName: "stall", toolCallId: "w-1", input: {} }] }]),
          tools: { stall },
        }),
      },
    });
    const thread = await pai.service.threads.create({ identity, agentId: "main" });
    await pai.service.threads.send({ identity, threadId: thread.threadId, message: { text: "go" } });
    await childStarted.promise;
    await pai.service.threads.cancel({ identity, threadId: thread.threadId, reason: "stop" });
    await pai.waitForIdle(thread.threadId);
    await eventually(() => childAborted);
    await pai.waitForIdle(childThreadId!);

    const parent = await pai.service.threads.get({ identity, threadId: thread.threadId });
    expect(parent.runs.at(-1)?.status).toBe("cancelled");
    const child = await pai.service.threads.get({ identity, threadId: childThreadId! });
    expect(child.runs.at(-1)?.status).toBe("cancelled");
    expect(projectedPart(child, "w-1")).toMatchObject({ state: "output-error", cancelled: true });
    await pai.close();
  });
});
