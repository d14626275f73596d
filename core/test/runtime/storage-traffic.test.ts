import { type AgentLike, defineAgent, defineTool, type StorageV1 } from "@pai/core";
import type { ScriptedStep } from "@pai/core/testing";
import { memoryStorage } from "@pai/storage-memory";
import { describe, expect, it, vi } from "vitest";
import { z } from "zod";
import { internalsOf } from "../../src/pai/internals.js";
import { createTestRuntime } from "../support/test-runtime.js";
import { handClock, scripted, watchInBackground } from "./_helpers.js";

const add = defineTool({
  id: "test.add.v1",
  description: "Add two numbers",
  inputSchema: z.object({ a: z.number(), b: z.number() }),
  outputSchema: z.number(),
  execute: ({ input }) => input.a + input.b,
});

/** Memory storage that counts whole-thread reads, event-log reads and lease calls. */
function countingReads(inner: StorageV1) {
  const counts = { loadThread: 0, readEvents: 0, acquireRunLease: 0, releaseRunLease: 0 };
  const storage: StorageV1 = {
    ...inner,
    acquireRunLease: (input) => {
      counts.acquireRunLease++;
      return inner.acquireRunLease(input);
    },
    releaseRunLease: (input) => {
      counts.releaseRunLease++;
      return inner.releaseRunLease(input);
    },
    loadThread: (input) => {
      counts.loadThread++;
      return inner.loadThread(input);
    },
    readEvents: (input) => {
      counts.readEvents++;
      return inner.readEvents(input);
    },
  };
  return { storage, counts };
}

/** Two servers (runtimes) of one agent on one memory storage, each with its own scripted model. */
async function twoServers<const TAgent extends AgentLike>(
  agent: TAgent,
  firstModel: ScriptedStep[],
  secondModel: ScriptedStep[],
) {
  const storage = memoryStorage();
  const first = await createTestRuntime({ agent, storage, model: firstModel });
  const second = await createTestRuntime({ agent, storage, model: secondModel });
  return { first, second, storage };
}

const approve = defineTool({
  id: "test.approve.v1",
  description: "Ask for approval",
  inputSchema: z.object({}),
  outputSchema: z.object({ ok: z.boolean() }),
  suspend: { approval: { suspendSchema: z.object({}), resumeSchema: z.object({ ok: z.boolean() }) } },
  execute: (ctx: any) => (ctx.entry.type === "initial" ? ctx.suspend("approval", {}) : ctx.entry.resume),
});

describe("storage traffic", () => {
  it("a run is leased by the commits that start and wake it, and never needs a lease call", async () => {
    const { storage, counts } = countingReads(memoryStorage());
    const t = await createTestRuntime({
      agent: defineAgent({ tools: { approve } }),
      storage,
      model: [{ toolCalls: [{ toolName: "approve", input: {} }] }, { text: "done" }],
    });
    const threadId = await t.createThread();
    const waiting = await t.send(threadId, "ship?");
    expect(waiting.runs.at(-1)?.status).toBe("waiting");
    // Taken by the commit that started the run, and not released when it parked: the commit
    // that wakes it takes the lease whatever lease it still has.
    expect(counts).toMatchObject({ acquireRunLease: 0, releaseRunLease: 0 });
    counts.acquireRunLease = 0;
    counts.releaseRunLease = 0;
    const actionId = waiting.actions[0]!.actionId;
    counts.loadThread = 0;
    counts.readEvents = 0;
    await t.pai.service.actions.submit({ identity: t.identity, threadId, actionId, payload: { ok: true } });
    await t.pai.waitForIdle(threadId);
    // No read: the answer is checked and committed against the snapshot this process kept (its
    // version guards the commit), and the re-entered tool and the driver work on the committed one.
    expect(counts).toMatchObject({ loadThread: 0, readEvents: 0 });
    const done = await t.snapshot(threadId);
    expect(done.runs.at(-1)?.status).toBe("completed");
    // The submit's commit takes the lease, the re-entered tool hands it to the driver, and a
    // completed run is never adopted, so it needs no release.
    expect(counts).toMatchObject({ acquireRunLease: 0, releaseRunLease: 0 });
    await t.close();
  });
});

describe("deadline wake-ups", () => {
  it("another server's wake-up reads the thread once before it commits the expiry", async () => {
    const time = handClock();
    const expiring = defineTool({
      id: "test.traffic-expiring.v1",
      description: "Ask for approval, for a minute at most",
      inputSchema: z.object({}),
      outputSchema: z.object({ ok: z.boolean() }),
      suspend: {
        approval: {
          suspendSchema: z.object({}),
          resumeSchema: z.object({ ok: z.boolean() }),
          deadline: { in: 60_000, reason: "Nobody answered." },
        },
      },
      execute: (ctx: any) => (ctx.entry.type === "initial" ? ctx.suspend("approval", {}) : ctx.entry.resume),
    });
    const agent = defineAgent({ tools: { approve: expiring } });
    const shared = memoryStorage();
    const asker = await createTestRuntime({
      agent,
      storage: shared,
      clock: time.clock,
      model: [{ toolCalls: [{ toolName: "approve", input: {} }] }],
    });
    const { storage, counts } = countingReads(shared);
    let readsBeforeCommit: number | undefined;
    const waker = await createTestRuntime({
      agent,
      storage: {
        ...storage,
        commit: (input) => {
          readsBeforeCommit ??= counts.loadThread + counts.readEvents;
          return shared.commit(input);
        },
      },
      clock: time.clock,
      model: [{ text: "Not shipped: nobody answered." }],
    });
    const threadId = await asker.createThread();
    const waiting = await asker.send(threadId, "ship?");
    expect(waiting.actions[0]?.state).toBe("pending");
    time.set("2030-01-07T08:01:00.000Z");
    await internalsOf(waker.pai).wake(threadId);
    await waker.pai.waitForIdle(threadId);
    // The expiry is decided and committed on the thread as the wake-up read it; the version of
    // that read guards the commit.
    expect(readsBeforeCommit).toBe(1);
    const done = await waker.snapshot(threadId);
    expect(done.actions[0]?.state).toBe("cancelled");
    expect(done.runs.at(-1)?.status).toBe("completed");
    await asker.close();
    await waker.close();
  });
});

describe("leases across servers", () => {
  it("another server resumes a run this one parked at once, although the parked run kept its lease", async () => {
    const { first, second } = await twoServers(
      defineAgent({ tools: { approve } }),
      [{ toolCalls: [{ toolName: "approve", input: {} }] }],
      [{ text: "done" }],
    );
    const threadId = await first.createThread();
    const waiting = await first.send(threadId, "ship?");
    expect(waiting.runs.at(-1)?.status).toBe("waiting");
    const started = Date.now();
    const done = await second.submit(threadId, waiting.actions[0]!.actionId, { ok: true });
    expect(done.runs.at(-1)?.status).toBe("completed");
    // Far below the 30 s lease: the waking commit took the lease instead of waiting it out.
    expect(Date.now() - started).toBeLessThan(5_000);
    await first.close();
    await second.close();
  });
});

describe("thread snapshots between turns", () => {
  it("the next turn on a thread this process just ran reads only what changed since", async () => {
    const { storage, counts } = countingReads(memoryStorage());
    const t = await createTestRuntime({
      agent: defineAgent({ tools: { add } }),
      storage,
      model: [{ toolCalls: [{ toolName: "add", input: { a: 1, b: 2 } }] }, { text: "3" }, { text: "again" }],
    });
    const threadId = await t.createThread();
    await t.send(threadId, "1+2?");
    counts.loadThread = 0;
    counts.readEvents = 0;
    const second = await t.send(threadId, "and now?");
    expect(second.runs.at(-1)?.status).toBe("completed");
    expect(counts.loadThread).toBe(0);
    expect(counts.readEvents).toBeGreaterThan(0);
    // The model saw the whole history in order, exactly as a fresh read would give it.
    const prompt = scripted(t)
      .calls.at(-1)!
      .prompt.map((message) => message.role);
    expect(prompt).toEqual(["user", "assistant", "tool", "assistant", "user"]);
    expect(await storage.loadThread({ threadId })).toEqual(await t.snapshot(threadId));
    await t.close();
  });

  it("a change committed by another server is seen on the next read", async () => {
    const {
      first,
      second,
      storage: shared,
    } = await twoServers(defineAgent({ tools: { add } }), [{ text: "one" }], [{ text: "two" }]);
    const threadId = await first.createThread();
    await first.send(threadId, "hello");
    await second.send(threadId, "hello from elsewhere");
    const seen = await first.pai.service.threads.get({ identity: first.identity, threadId });
    const fresh = await second.pai.service.threads.get({ identity: second.identity, threadId });
    expect(seen).toEqual(fresh);
    expect(seen.thread.version).toBe((await shared.loadThread({ threadId }))!.thread.version);
    await first.close();
    await second.close();
  });

  it("a watcher in the process takes each batch from its notification: no storage read per commit", async () => {
    const { storage } = countingReads(memoryStorage());
    // The watcher reads page by page (with a limit); the runtime's own refreshes read without one.
    const watcherReads = { count: 0 };
    const readEvents = storage.readEvents;
    storage.readEvents = (input) => {
      if (input.limit !== undefined) watcherReads.count++;
      return readEvents(input);
    };
    const t = await createTestRuntime({
      agent: defineAgent({ tools: { add } }),
      storage,
      model: [{ toolCalls: [{ toolName: "add", input: { a: 1, b: 2 } }] }, { text: "3" }],
    });
    const threadId = await t.createThread();
    const initial = await t.snapshot(threadId);
    const committed: Array<{ version: number; events: unknown[]; createdAt: string }> = [];
    const watch = watchInBackground(t, threadId, initial.thread.version, (event) => {
      if (event.type !== "committed") return;
      committed.push(event);
      // A caller that changes what it got must not change the runtime's rows.
      for (const item of event.events) {
        if (item.type === "message-upserted") (item.message as { role: string }).role = "changed";
      }
    });
    await vi.waitFor(() => expect(watcherReads.count).toBe(1));
    await t.pai.service.threads.send({ identity: t.identity, threadId, message: { text: "1+2?" } });
    await t.pai.waitForIdle(threadId);
    const final = await t.snapshot(threadId);
    await vi.waitFor(() => expect(committed.at(-1)?.version).toBe(final.thread.version));
    await watch.stop();
    // Only the watcher's first read: every commit of the run came with its batch.
    expect(watcherReads.count).toBe(1);
    expect(committed.map((batch) => batch.version)).toEqual(
      Array.from(
        { length: final.thread.version - initial.thread.version },
        (_, i) => initial.thread.version + i + 1,
      ),
    );
    const stored = await storage.readEvents({ threadId, afterVersion: initial.thread.version });
    expect(committed.map((batch) => batch.events.length)).toEqual(stored.map((batch) => batch.events.length));
    // The runtime's kept snapshot and the stored rows are untouched by the watcher's changes.
    expect((await t.snapshot(threadId)).messages.map((row) => row.role)).toEqual(["user", "assistant"]);
    expect(stored.flatMap((batch) => batch.events)).not.toContainEqual(
      expect.objectContaining({ message: expect.objectContaining({ role: "changed" }) }),
    );
    await t.close();
  });

  it("sending to a thread this process just created or ran reads nothing first", async () => {
    const { storage, counts } = countingReads(memoryStorage());
    const t = await createTestRuntime({
      agent: defineAgent({ tools: { add } }),
      storage,
      model: [{ text: "one" }, { text: "two" }],
    });
    const threadId = await t.createThread();
    for (const text of ["first", "second"]) {
      counts.loadThread = 0;
      counts.readEvents = 0;
      await t.pai.service.threads.send({ identity: t.identity, threadId, message: { text } });
      await t.pai.waitForIdle(threadId);
      expect(counts).toMatchObject({ loadThread: 0, readEvents: 0 });
    }
    expect((await t.snapshot(threadId)).messages.map((row) => row.role)).toEqual([
      "user",
      "assistant",
      "user",
      "assistant",
    ]);
    await t.close();
  });

  it("a kept snapshot gone stale behind another server's changes gives the same answers as a fresh read", async () => {
    const { first, second } = await twoServers(
      defineAgent({ tools: { add, approve } }),
      [{ text: "one" }, { text: "three" }],
      [{ text: "two" }, { toolCalls: [{ toolName: "approve", input: {} }] }],
    );
    const threadId = await first.createThread();
    await first.send(threadId, "one");
    // Another server answers a turn: the first server's kept snapshot is now behind.
    await second.send(threadId, "two");
    const third = await first.send(threadId, "three");
    expect(third.messages.map((row) => row.role)).toEqual([
      "user",
      "assistant",
      "user",
      "assistant",
      "user",
      "assistant",
    ]);
    // Now the other server parks a run: a send on the stale snapshot must see its pending action.
    const waiting = await second.send(threadId, "ship?");
    expect(waiting.runs.at(-1)?.status).toBe("waiting");
    const refused = await first.pai.service.threads
      .send({ identity: first.identity, threadId, message: { text: "four" } })
      .catch((error) => error);
    expect(refused).toMatchObject({ code: "CONFLICT" });
    expect(String(refused.message)).toContain("pending actions");
    await first.close();
    await second.close();
  });

  it("an answer on a server whose kept snapshot predates the action reads again, and is taken", async () => {
    const { first, second } = await twoServers(
      defineAgent({ tools: { approve } }),
      [{ text: "shipped" }],
      [{ toolCalls: [{ toolName: "approve", input: {} }] }],
    );
    // The first server created the thread and keeps it; the second parks a run on it.
    const threadId = await first.createThread();
    const waiting = await second.send(threadId, "ship?");
    const actionId = waiting.actions[0]!.actionId;
    const done = await first.submit(threadId, actionId, { ok: true });
    expect(done.runs.at(-1)?.status).toBe("completed");
    expect(done.actions[0]).toMatchObject({ actionId, state: "submitted" });
    // An action that exists nowhere is still refused, after that fresh read.
    const unknown = await first.pai.service.actions
      .submit({ identity: first.identity, threadId, actionId: "no-such-action", payload: { ok: true } })
      .catch((error) => error);
    expect(unknown).toMatchObject({ code: "NOT_FOUND" });
    await first.close();
    await second.close();
  });

  it("an answer on a kept snapshot that another server already answered: replayed for its key, refused otherwise", async () => {
    const { first, second } = await twoServers(
      defineAgent({ tools: { approve } }),
      [{ toolCalls: [{ toolName: "approve", input: {} }] }],
      [{ text: "shipped" }],
    );
    const threadId = await first.createThread();
    // The first server parks the run and keeps the snapshot with the action pending.
    const waiting = await first.send(threadId, "ship?");
    const actionId = waiting.actions[0]!.actionId;
    const answer = { identity: first.identity, threadId, actionId, payload: { ok: true } };
    const won = await second.pai.service.actions.submit({ ...answer, idempotencyKey: "answer-1" });
    await second.pai.waitForIdle(threadId);
    // The first server's kept snapshot still shows the action pending: its commit conflicts,
    // and the answer is decided again on what storage holds.
    const replayed = await first.pai.service.actions.submit({ ...answer, idempotencyKey: "answer-1" });
    expect(replayed).toEqual(won);
    const refused = await first.pai.service.actions
      .submit({ ...answer, idempotencyKey: "answer-2" })
      .catch((error) => error);
    expect(refused).toMatchObject({ code: "CONFLICT" });
    const cancelled = await first.pai.service.actions
      .cancel({ identity: first.identity, threadId, actionId })
      .catch((error) => error);
    expect(cancelled).toMatchObject({ code: "CONFLICT" });
    const thread = await first.pai.service.threads.get({ identity: first.identity, threadId });
    expect(thread.runs.at(-1)?.status).toBe("completed");
    expect(thread.actions.filter((action) => action.state === "submitted")).toHaveLength(1);
    await first.close();
    await second.close();
  });

  it("a parked thread is kept like an idle one, bounded, and answered after one read of what changed", async () => {
    const { storage, counts } = countingReads(memoryStorage());
    const t = await createTestRuntime({
      agent: defineAgent({ tools: { approve } }),
      storage,
      model: Array.from({ length: 80 }, () => ({ toolCalls: [{ toolName: "approve", input: {} }] })),
    });
    const threadId = await t.createThread();
    const parked = await t.send(threadId, "ship?");
    expect(parked.runs.at(-1)?.status).toBe("waiting");
    expect(internalsOf(t.pai).store.cachedThreads).toBe(0);
    expect(internalsOf(t.pai).store.recentThreads).toBe(1);
    expect(internalsOf(t.pai).history.size).toBe(1);
    counts.loadThread = 0;
    counts.readEvents = 0;
    // The client reads the thread and answers: each is brought up to date from the event log.
    const seen = await t.pai.service.threads.get({ identity: t.identity, threadId });
    const actionId = seen.actions.find((action) => action.state === "pending")!.actionId;
    await t.pai.service.actions.submit({ identity: t.identity, threadId, actionId, payload: { ok: true } });
    await t.pai.waitForIdle(threadId);
    // The read brings the kept snapshot up to date; the answer commits against it without a read.
    expect(counts).toMatchObject({ loadThread: 0, readEvents: 1 });
    // Ten thousand parked threads would cost what 64 do.
    for (let index = 0; index < 70; index++) await t.send(await t.createThread(), "ship?");
    expect(internalsOf(t.pai).store.cachedThreads).toBe(0);
    expect(internalsOf(t.pai).store.recentThreads).toBe(64);
    expect(internalsOf(t.pai).history.size).toBe(64);
    await t.close();
  });

  it("idle threads kept between turns are bounded", async () => {
    const t = await createTestRuntime({
      agent: defineAgent({ tools: { add } }),
      model: Array.from({ length: 80 }, () => ({ text: "ok" })),
    });
    for (let index = 0; index < 70; index++) await t.send(await t.createThread(), "hi");
    expect(internalsOf(t.pai).store.cachedThreads).toBe(0);
    expect(internalsOf(t.pai).store.recentThreads).toBe(64);
    expect(internalsOf(t.pai).history.size).toBe(64);
    await t.close();
  });
});
