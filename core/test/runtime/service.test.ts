import {
  createMemoryNotifier,
  defineAgent,
  defineTool,
  type NotifierMessage,
  type NotifierV1,
  type WatchEvent,
} from "@pai/core";
import { applyStoredEvents, projectThreadState } from "@pai/core/protocol";
import { scriptedModel } from "@pai/core/testing";
import { describe, expect, it, vi } from "vitest";
import { z } from "zod";
import { internalsOf } from "../../src/pai/internals.js";
import { createTestRuntime } from "../support/test-runtime.js";
import { approvalTool, deferred, rejection, scripted, toolResultFor, watchInBackground } from "./_helpers.js";

const approve = approvalTool;

const callApprove = {
  toolCalls: [{ toolName: "approve", toolCallId: "call-1", input: { summary: "Ship v2" } }],
};

/** A memory notifier that tells when a watcher has subscribed, so live events are not raced. */
function observedNotifier() {
  const base = createMemoryNotifier();
  const subscribed = deferred();
  const notifier: NotifierV1 = {
    specificationVersion: "v1",
    publish: (message) => base.publish(message),
    subscribe(threadId, listener) {
      const unsubscribe = base.subscribe(threadId, listener);
      subscribed.resolve();
      return unsubscribe;
    },
  };
  return { notifier, subscribed: subscribed.promise };
}

describe("service", () => {
  it("threads.get hands out the caller's own snapshot, also for a thread the runtime just ran", async () => {
    const t = await createTestRuntime({
      agent: defineAgent({ tools: { approve } }),
      model: [{ text: "first" }, { text: "second" }],
    });
    const threadId = await t.createThread();
    await t.send(threadId, "one");
    const got = await t.pai.service.threads.get({ identity: t.identity, threadId });
    got.thread.title = "changed by the caller";
    got.messages.length = 0;
    got.runs.length = 0;

    const again = await t.pai.service.threads.get({ identity: t.identity, threadId });
    expect(again.thread.title).toBeNull();
    expect(again.messages).toHaveLength(2);
    // The next turn runs on the stored history, not on the caller's mutated copy.
    const after = await t.send(threadId, "two");
    expect(after.messages.map((row) => row.role)).toEqual(["user", "assistant", "user", "assistant"]);
    expect(after.runs.every((run) => run.status === "completed")).toBe(true);
    await t.close();
  });

  it("a runtime without a notifier uses the storage's own and publishes each commit exactly once", async () => {
    const { memoryStorage } = await import("@pai/storage-memory");
    const notifier = createMemoryNotifier();
    const inner = memoryStorage();
    const published: number[] = [];
    const seen: number[] = [];
    // A storage that announces its own commits, as kyselyStorage with a postgresNotifier does.
    const storage: typeof inner = {
      ...inner,
      notifier,
      async commit(input: Parameters<typeof inner.commit>[0]) {
        const result = await inner.commit(input);
        if (result.ok) {
          published.push(result.version);
          await notifier.publish({
            type: "thread-advanced",
            threadId: input.threadId,
            version: result.version,
          });
        }
        return result;
      },
    };
    const t = await createTestRuntime({
      agent: defineAgent({ tools: { approve } }),
      model: [callApprove],
      storage,
    });
    expect(internalsOf(t.pai).notifier).toBe(notifier);
    const threadId = await t.createThread();
    notifier.subscribe(threadId, (message) => {
      if (message.type === "thread-advanced") seen.push(message.version);
    });
    await t.send(threadId, "ship it");
    expect(seen.length).toBeGreaterThan(1);
    expect(seen).toEqual(published.slice(1));
    await t.close();
  });

  it("a thread of another scope is NOT_FOUND for get, send, cancel, watch, submit, cancel and fail", async () => {
    const t = await createTestRuntime({ agent: defineAgent({ tools: { approve } }), model: [callApprove] });
    const threadId = await t.createThread();
    const waiting = await t.send(threadId, "ship it");
    const actionId = waiting.actions[0]!.actionId;
    const identity = { scopeKey: "another-tenant", userKey: "mallory" };
    const service = t.pai.service;

    const calls: Array<[string, () => Promise<unknown>]> = [
      ["threads.get", () => service.threads.get({ identity, threadId })],
      ["threads.send", () => service.threads.send({ identity, threadId, message: { text: "hi" } })],
      ["threads.cancel", () => service.threads.cancel({ identity, threadId })],
      [
        "threads.watch",
        async () => {
          const iterator = service.threads.watch({ identity, threadId })[Symbol.asyncIterator]();
          await iterator.next();
        },
      ],
      [
        "actions.submit",
        () => service.actions.submit({ identity, threadId, actionId, payload: { approved: true } }),
      ],
      ["actions.cancel", () => service.actions.cancel({ identity, threadId, actionId })],
      ["actions.fail", () => service.actions.fail({ identity, threadId, actionId, error: "nope" })],
    ];
    for (const [name, call] of calls) {
      const error = await rejection(call());
      expect({ name, code: error.code }).toEqual({ name, code: "NOT_FOUND" });
    }
    await t.waitForIdle(threadId);
    expect(await t.snapshot(threadId)).toEqual(waiting);
  });

  it("threads.list pages through the scope's threads with a cursor", async () => {
    const t = await createTestRuntime({ agent: defineAgent({ tools: {} }), model: [] });
    const created: string[] = [];
    for (let index = 0; index < 5; index++) created.push(await t.createThread({ title: `Thread ${index}` }));
    await t.pai.service.threads.create({ identity: { scopeKey: "another-tenant" }, title: "foreign" });

    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const page: Awaited<ReturnType<typeof t.pai.service.threads.list>> = await t.pai.service.threads.list({
        identity: t.identity,
        limit: 2,
        cursor,
      });
      expect(page.items.length).toBeLessThanOrEqual(2);
      seen.push(...page.items.map((thread) => thread.threadId));
      cursor = page.nextCursor;
      pages++;
    } while (cursor && pages < 10);

    expect(pages).toBe(3);
    expect(new Set(seen).size).toBe(5);
    expect([...seen].sort()).toEqual([...created].sort());
  });

  it("a watcher whose commit notifications are lost still delivers every commit, after watchCatchUpMs", async () => {
    // Notifications are best effort (a publisher can crash between its commit and its NOTIFY):
    // this notifier loses every thread-advanced message, so only the catch-up read can deliver.
    const base = createMemoryNotifier();
    const subscribed = deferred();
    const notifier: NotifierV1 = {
      specificationVersion: "v1",
      publish: (message) => (message.type === "thread-advanced" ? Promise.resolve() : base.publish(message)),
      subscribe(threadId, listener) {
        const unsubscribe = base.subscribe(threadId, listener);
        subscribed.resolve();
        return unsubscribe;
      },
    };
    const t = await createTestRuntime({
      agent: defineAgent({ tools: {} }),
      model: [{ text: "done" }],
      notifier,
      watchCatchUpMs: 50,
    });
    const threadId = await t.createThread();
    const initial = await t.snapshot(threadId);
    const versions: number[] = [];
    const watch = watchInBackground(t, threadId, initial.thread.version, (event) => {
      if (event.type === "committed") versions.push(event.version);
    });
    await subscribed.promise;
    await t.send(threadId, "hi");
    const final = await t.snapshot(threadId);
    expect(final.runs.at(-1)?.status).toBe("completed");
    await vi.waitFor(() => expect(versions.at(-1)).toBe(final.thread.version), { timeout: 2000 });
    await watch.stop();
    expect(versions).toEqual([...versions].sort((a, b) => a - b));
    expect(new Set(versions).size).toBe(versions.length);
  });

  it("never yields a live event ahead of a commit announced before it, when announcements arrive in batches", async () => {
    // A notifier between processes carries no committed events (the watcher reads them from
    // storage) and delivers what was published meanwhile together, as one NOTIFY of several
    // payloads does under load or with a publish window. The tool's result commit and the next
    // step's text deltas land in one batch here.
    const base = createMemoryNotifier();
    const subscribed = deferred();
    const published: NotifierMessage[] = [];
    let pending: NotifierMessage[] = [];
    const notifier: NotifierV1 = {
      specificationVersion: "v1",
      publish(message) {
        const sent: NotifierMessage =
          message.type === "thread-advanced"
            ? { type: message.type, threadId: message.threadId, version: message.version }
            : message;
        published.push(sent);
        pending.push(sent);
        // The first message of a batch schedules its delivery; the rest join it.
        if (pending.length === 1)
          setTimeout(() => {
            const batch = pending;
            pending = [];
            for (const each of batch) void base.publish(each);
          }, 5);
        return Promise.resolve();
      },
      subscribe(threadId, listener) {
        const unsubscribe = base.subscribe(threadId, listener);
        subscribed.resolve();
        return unsubscribe;
      },
    };
    const add = defineTool({
      id: "test.add.v1",
      description: "Add two numbers",
      inputSchema: z.object({ a: z.number(), b: z.number() }),
      execute: async ({ input }: any) => ({ sum: input.a + input.b }),
    });
    const t = await createTestRuntime({
      agent: defineAgent({ tools: { add } }),
      model: [
        { toolCalls: [{ toolName: "add", toolCallId: "call-add", input: { a: 1, b: 2 } }] },
        { text: ["The sum ", "is 3."] },
      ],
      notifier,
    });
    const threadId = await t.createThread();
    const initial = await t.snapshot(threadId);
    const events: WatchEvent[] = [];
    const watch = watchInBackground(t, threadId, initial.thread.version, (event) => events.push(event));
    await subscribed.promise;
    await t.send(threadId, "1+2?");
    const final = await t.snapshot(threadId);
    await vi.waitFor(() =>
      expect(
        events.some((event) => event.type === "committed" && event.version === final.thread.version),
      ).toBe(true),
    );
    await watch.stop();
    // For each live event, the highest version announced before it was published.
    const announcedBefore = new Map<unknown, number>();
    let announced = initial.thread.version;
    for (const message of published) {
      if (message.type === "thread-advanced") announced = Math.max(announced, message.version);
      else announcedBefore.set(message.event, announced);
    }
    let delivered = initial.thread.version;
    const late: string[] = [];
    for (const event of events) {
      if (event.type === "committed") delivered = event.version;
      else if (delivered < (announcedBefore.get(event.event) ?? 0))
        late.push(`${event.event.type} before version ${announcedBefore.get(event.event)}`);
    }
    expect(late).toEqual([]);
    const deltas = events.flatMap((event) =>
      event.type === "live" && event.event.type === "text-delta" ? [event.event.delta] : [],
    );
    expect(deltas.join("")).toBe("The sum is 3.");
    await t.close();
  });

  it("refuses a watchCatchUpMs that would never catch up or would poll", async () => {
    for (const watchCatchUpMs of [0, 5, Number.POSITIVE_INFINITY, Number.NaN, 86_400_001]) {
      await expect(
        createTestRuntime({ agent: defineAgent({ tools: {} }), model: [], watchCatchUpMs }),
      ).rejects.toThrow(/watchCatchUpMs must be a number of milliseconds between 10 and 86400000/);
    }
  });

  it("watch yields committed events in version order plus live text deltas, and replaying them equals a fresh get", async () => {
    const { notifier, subscribed } = observedNotifier();
    const t = await createTestRuntime({
      agent: defineAgent({ tools: { approve } }),
      model: [callApprove, { text: ["Hel", "lo ", "world"] }],
      notifier,
    });
    const threadId = await t.createThread();
    const initial = await t.snapshot(threadId);

    const events: WatchEvent[] = [];
    const watch = watchInBackground(t, threadId, initial.thread.version, (event) => events.push(event));
    await subscribed;

    await t.send(threadId, "ship it");
    const final = await t.submit(threadId, "approve.approval", { approved: true });
    expect(final.runs.at(-1)?.status).toBe("completed");
    await vi.waitFor(() => {
      expect(
        events.some((event) => event.type === "committed" && event.version === final.thread.version),
      ).toBe(true);
    });
    await watch.stop();

    const committed = events.filter(
      (event): event is Extract<WatchEvent, { type: "committed" }> => event.type === "committed",
    );
    const versions = committed.map((event) => event.version);
    expect(versions).toEqual(
      Array.from(
        { length: final.thread.version - initial.thread.version },
        (_, i) => initial.thread.version + i + 1,
      ),
    );
    const deltas = events.flatMap((event) =>
      event.type === "live" && event.event.type === "text-delta" ? [event.event.delta] : [],
    );
    expect(deltas.join("")).toBe("Hello world");

    const replayed = committed.reduce((snapshot, event) => applyStoredEvents(snapshot, event), initial);
    const reloaded = await t.snapshot(threadId);
    expect(replayed).toEqual(reloaded);
    expect(projectThreadState(replayed)).toEqual(projectThreadState(reloaded));
  });

  it("cancelling a run aborts ctx.signal and records the call as cancelled", async () => {
    const started = deferred();
    let aborted = false;
    const slowExport = defineTool({
      id: "test.slow-export.v1",
      description: "Export everything",
      inputSchema: z.object({}),
      execute: (ctx: any) =>
        new Promise((_, reject) => {
          ctx.signal.addEventListener(
            "abort",
            () => {
              aborted = true;
              reject(ctx.signal.reason);
            },
            { once: true },
          );
          started.resolve();
        }),
    });
    const t = await createTestRuntime({
      agent: defineAgent({ tools: { slowExport } }),
      model: [{ toolCalls: [{ toolName: "slowExport", toolCallId: "call-export", input: {} }] }],
    });
    const threadId = await t.createThread();
    await t.pai.service.threads.send({ identity: t.identity, threadId, message: { text: "export" } });
    await started.promise;
    await t.pai.service.threads.cancel({ identity: t.identity, threadId, reason: "the user pressed stop" });
    await t.waitForIdle(threadId);

    expect(aborted).toBe(true);
    const snapshot = await t.snapshot(threadId);
    expect(snapshot.runs.at(-1)?.status).toBe("cancelled");
    expect(snapshot.thread.status).toBe("idle");
    const part = projectThreadState(snapshot)
      .messages.flatMap((message) => message.parts)
      .find((candidate: any) => candidate.toolCallId === "call-export") as any;
    expect(part).toMatchObject({ state: "output-error", cancelled: true });
    expect(part.errorText).toContain("the user pressed stop");
    expect(scripted(t).calls).toHaveLength(1);
  });

  it("cancelling a waiting run cancels its pending actions model-visibly", async () => {
    const t = await createTestRuntime({ agent: defineAgent({ tools: { approve } }), model: [callApprove] });
    const threadId = await t.createThread();
    const waiting = await t.send(threadId, "ship it");
    const actionId = waiting.actions[0]!.actionId;

    await t.pai.service.threads.cancel({ identity: t.identity, threadId, reason: "user left" });
    await t.waitForIdle(threadId);
    const snapshot = await t.snapshot(threadId);

    expect(snapshot.runs.at(-1)?.status).toBe("cancelled");
    expect(snapshot.actions[0]).toMatchObject({ actionId, state: "cancelled" });
    const part = projectThreadState(snapshot)
      .messages.flatMap((message) => message.parts)
      .find((candidate: any) => candidate.toolCallId === "call-1") as any;
    expect(part).toMatchObject({ state: "output-error", cancelled: true, pendingSuspension: null });
    const late = await rejection(
      t.pai.service.actions.submit({ identity: t.identity, threadId, actionId, payload: { approved: true } }),
    );
    expect(late.code).toBe("CONFLICT");
  });

  it("maxSteps stops the loop", async () => {
    const ping = defineTool({
      id: "test.ping.v1",
      description: "Ping",
      inputSchema: z.object({}),
      outputSchema: z.literal("pong"),
      execute: () => "pong" as const,
    });
    const model = scriptedModel((_call, index) => ({
      toolCalls: [{ toolName: "ping", toolCallId: `call-${index + 1}`, input: {} }],
    }));
    const t = await createTestRuntime({ agent: defineAgent({ tools: { ping }, maxSteps: 3 }), model });
    const threadId = await t.createThread();
    const snapshot = await t.send(threadId, "ping forever");

    expect(model.calls).toHaveLength(3);
    expect(snapshot.runs.at(-1)).toMatchObject({ status: "completed", step: 3 });
    expect((await t.toolParts(threadId)).map((part) => part.state)).toEqual([
      "output-available",
      "output-available",
      "output-available",
    ]);
  });

  it("a new message while actions are pending is a CONFLICT naming them", async () => {
    const t = await createTestRuntime({ agent: defineAgent({ tools: { approve } }), model: [callApprove] });
    const threadId = await t.createThread();
    const waiting = await t.send(threadId, "ship it");
    const actionId = waiting.actions[0]!.actionId;

    const error = await rejection(
      t.pai.service.threads.send({ identity: t.identity, threadId, message: { text: "actually, wait" } }),
    );
    expect(error.code).toBe("CONFLICT");
    expect(error.message).toContain("approve.approval");
    expect(error.message).toContain(actionId);
    await t.waitForIdle(threadId);
    expect(await t.snapshot(threadId)).toEqual(waiting);
  });

  it("a new message with cancelPending cancels the pending actions and is appended", async () => {
    const t = await createTestRuntime({
      agent: defineAgent({ tools: { approve } }),
      model: [callApprove, { text: "Okay, not shipping." }],
    });
    const threadId = await t.createThread();
    const waiting = await t.send(threadId, "ship it");
    const firstRun = waiting.runs.at(-1)!;

    const done = await t.send(threadId, "actually, don't", { cancelPending: true });

    expect(done.actions[0]).toMatchObject({ state: "cancelled" });
    expect(done.runs.map((run) => [run.runId === firstRun.runId, run.status])).toEqual([
      [true, "cancelled"],
      [false, "completed"],
    ]);
    const users = done.messages.filter((message) => message.role === "user");
    expect(users.map((message) => (message.message.parts[0] as { text: string }).text)).toEqual([
      "ship it",
      "actually, don't",
    ]);
    const [part] = await t.toolParts(threadId);
    expect(part).toMatchObject({ state: "output-error" });
    expect(toolResultFor(scripted(t), 1, "call-1").output).toMatchObject({ type: "error-text" });
    expect(await t.lastText(threadId)).toBe("Okay, not shipping.");
  });

  it("a trusted trigger while a run waits is queued and starts once that run ends", async () => {
    const t = await createTestRuntime({
      agent: defineAgent({ tools: { approve } }),
      model: [callApprove, { text: "Approved and shipped." }, { text: "Noted the build result." }],
    });
    const threadId = await t.createThread();
    await t.send(threadId, "ship it");

    const triggered = await t.pai.trusted.trigger({
      threadId,
      scope: { scopeKey: "test-scope", userKey: "test-user" },
      notification: "The nightly build finished.",
    });
    expect(triggered.queued).toBe(true);
    const queued = await t.snapshot(threadId);
    expect(queued.runs.map((run) => run.status)).toEqual(["waiting", "queued"]);

    const done = await t.submit(threadId, "approve.approval", { approved: true });
    expect(done.runs.map((run) => run.status)).toEqual(["completed", "completed"]);
    expect(done.runs[1]!.runId).toBe(triggered.runId);
    expect(await t.lastText(threadId)).toBe("Noted the build result.");
    expect(JSON.stringify(scripted(t).calls[2]!.prompt)).toContain("The nightly build finished.");
  });

  it("a trusted trigger for a thread of another scope is NOT_FOUND", async () => {
    const t = await createTestRuntime({ agent: defineAgent({ tools: {} }), model: [] });
    const threadId = await t.createThread();
    const error = await rejection(
      t.pai.trusted.trigger({ threadId, scope: { scopeKey: "another-tenant" }, notification: "hi" }),
    );
    expect(error.code).toBe("NOT_FOUND");
  });
});
