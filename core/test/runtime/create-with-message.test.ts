import { defineAgent, type StorageV1 } from "@pai/core";
import { memoryStorage } from "@pai/storage-memory";
import { describe, expect, it } from "vitest";
import { createTestRuntime, openTestStorage } from "../support/test-runtime.js";
import { approvalTool, rejection, scripted } from "./_helpers.js";

const approve = approvalTool;

const script = [
  { toolCalls: [{ toolName: "approve", toolCallId: "call-1", input: { summary: "Ship v2" } }] },
  { text: "Shipped." },
];

/** Wraps a storage so a test can count its commits. */
function counting(inner: StorageV1) {
  const counts = { commits: 0 };
  const storage: StorageV1 = {
    ...inner,
    commit: (input) => {
      counts.commits++;
      return inner.commit(input);
    },
  };
  return { storage, counts };
}

describe("threads.create with a first message", () => {
  it("creates the thread, stores the message and starts its run in one commit", async () => {
    const opened = await openTestStorage();
    const { storage, counts } = counting(opened.storage);
    const t = await createTestRuntime({ agent: defineAgent({ tools: { approve } }), model: script, storage });
    const row = await t.pai.service.threads.create({
      identity: t.identity,
      title: "Release",
      message: { text: "ship it", id: "first" },
      clientData: { locale: "en" },
    });
    expect(counts.commits).toBe(1);
    expect(row).toMatchObject({ title: "Release", status: "running", version: 1 });
    expect(row.activeRunId).toEqual(expect.any(String));

    await t.waitForIdle(row.threadId);
    const waiting = await t.snapshot(row.threadId);
    expect(waiting.messages[0]).toMatchObject({ messageId: "first", role: "user" });
    expect(waiting.runs).toEqual([
      expect.objectContaining({ runId: row.activeRunId, status: "waiting", clientData: { locale: "en" } }),
    ]);
    expect(waiting.runs[0]!.trigger).toEqual({ type: "message", messageId: "first" });
    // The first model call saw the message; the run waits on the tool's approval.
    expect(JSON.stringify(scripted(t).calls[0]!.prompt)).toContain("ship it");

    const done = await t.submit(row.threadId, "approve.approval", { approved: true });
    expect(done.runs.map((run) => run.status)).toEqual(["completed"]);
    expect(await t.lastText(row.threadId)).toBe("Shipped.");
    await t.close();
    await opened.dispose();
  });

  it("leaves the same history as create and then send", async () => {
    const together = await createTestRuntime({ agent: defineAgent({ tools: { approve } }), model: script });
    const apart = await createTestRuntime({ agent: defineAgent({ tools: { approve } }), model: script });
    const created = await together.pai.service.threads.create({
      identity: together.identity,
      message: { text: "ship it" },
    });
    await together.waitForIdle(created.threadId);
    const first = await together.submit(created.threadId, "approve.approval", { approved: true });
    const threadId = await apart.createThread();
    await apart.send(threadId, "ship it");
    const second = await apart.submit(threadId, "approve.approval", { approved: true });

    const shape = (snapshot: typeof first) => ({
      status: snapshot.thread.status,
      messages: snapshot.messages.map((message) => [message.role, message.position, message.message.parts]),
      runs: snapshot.runs.map((run) => [run.status, run.trigger.type, run.step]),
      actions: snapshot.actions.map((action) => [action.name, action.state]),
    });
    // Ids differ between the runtimes, so their shapes are compared; one commit fewer.
    expect(shape(first)).toEqual(shape(second));
    expect(first.thread.version).toBe(second.thread.version - 1);
    await together.close();
    await apart.close();
  });

  it("refuses a bad first message, client tools without a message and an unknown agent, creating nothing", async () => {
    const t = await createTestRuntime({ agent: defineAgent({ tools: { approve } }), model: script });
    const cases: Array<[string, Record<string, unknown>]> = [
      ["blank text", { message: { text: "   " } }],
      ["no text or parts", { message: { hello: "there" } }],
      ["an id with an edge space", { message: { text: "hi", id: "m1 " } }],
      ["client tools alone", { clientTools: [] }],
      ["client data alone", { clientData: { a: 1 } }],
      [
        "a client tool named like a backend tool",
        {
          message: { text: "hi" },
          clientTools: [{ name: "approve", description: "x", inputSchema: { type: "object" } }],
        },
      ],
    ];
    for (const [what, input] of cases) {
      const error = await rejection(
        t.pai.service.threads.create({ identity: t.identity, ...input } as never),
      );
      expect(error.code, what).toBe("INVALID_INPUT");
    }
    const unknownAgent = await rejection(
      t.pai.service.threads.create({ identity: t.identity, agentId: "nobody", message: { text: "hi" } }),
    );
    expect(unknownAgent.code).not.toBe("INTERNAL");
    const listed = await t.pai.service.threads.list({ identity: t.identity });
    expect(listed.items).toEqual([]);
    expect(scripted(t).calls).toHaveLength(0);
    await t.close();
  });

  it("is announced to a watcher as one committed version holding the thread, the message and the run", async () => {
    const t = await createTestRuntime({
      agent: defineAgent({ tools: {} }),
      model: [{ text: "Hello." }],
      storage: memoryStorage(),
    });
    const row = await t.pai.service.threads.create({ identity: t.identity, message: { text: "hi" } });
    await t.waitForIdle(row.threadId);
    const events = t.pai.service.threads.watch({
      identity: t.identity,
      threadId: row.threadId,
      afterVersion: 0,
    });
    const iterator = events[Symbol.asyncIterator]();
    const first = await iterator.next();
    await iterator.return?.();
    expect(first.value).toMatchObject({ type: "committed", version: 1 });
    const types = (first.value as { events: Array<{ type: string }> }).events.map((event) => event.type);
    expect(types[0]).toBe("thread-updated");
    expect(types).toContain("message-upserted");
    expect(types).toContain("run-upserted");
    expect(await t.lastText(row.threadId)).toBe("Hello.");
    await t.close();
  });
});
