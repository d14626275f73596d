import { defineAgent, defineTool, PaiError } from "@pai/core";
import { memoryStorage } from "@pai/storage-memory";
import { afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { createTestRuntime } from "../support/test-runtime.js";
import { handClock } from "./_helpers.js";

const agent = defineAgent({ tools: {} });
const scope = { scopeKey: "test-scope", userKey: "test-user" };

function texts(snapshot: { messages: Array<{ role: string; message: { parts: unknown[] } }> }, role: string) {
  return snapshot.messages
    .filter((message) => message.role === role)
    .flatMap((message) => message.message.parts as Array<{ type: string; text?: string }>)
    .filter((part) => part.type === "text")
    .map((part) => part.text);
}

const code = (expected: string) => (error: unknown) => PaiError.isInstance(error) && error.code === expected;

describe("schedules", () => {
  const open: Array<{ close(): Promise<void> }> = [];
  afterEach(async () => {
    for (const runtime of open.splice(0)) await runtime.close();
  });

  it("a one-off schedule fires once at its instant, and is visible on the thread", async () => {
    const time = handClock();
    const runtime = await createTestRuntime({
      agent,
      clock: time.clock,
      model: [{ text: "Reminder noted." }],
    });
    open.push(runtime);
    const threadId = await runtime.createThread();
    const schedule = await runtime.pai.trusted.schedule({
      threadId,
      scope,
      at: "2030-01-07T09:00:00.000Z",
      message: "Remind the user about the report.",
      data: { report: "Q3" },
    });
    expect(schedule).toMatchObject({ state: "active", nextAt: "2030-01-07T09:00:00.000Z", fired: 0 });
    const before = await runtime.snapshot(threadId);
    expect(before.thread.schedules).toEqual([schedule]);
    expect(before.thread.wakeAt).toBe("2030-01-07T09:00:00.000Z");
    // Not due yet: nothing fires.
    await runtime.pai.recover();
    expect((await runtime.snapshot(threadId)).runs).toEqual([]);
    time.set("2030-01-07T09:00:00.000Z");
    await runtime.pai.recover();
    await runtime.pai.recover();
    await runtime.pai.waitForIdle(threadId);
    const after = await runtime.snapshot(threadId);
    expect(after.runs.map((run) => run.status)).toEqual(["completed"]);
    expect(texts(after, "user")).toEqual([`Remind the user about the report.\n\n{"report":"Q3"}`]);
    expect(texts(after, "assistant")).toEqual(["Reminder noted."]);
    expect(after.thread.schedules).toEqual([
      expect.objectContaining({ scheduleId: schedule.scheduleId, state: "done", fired: 1, nextAt: null }),
    ]);
    expect(after.thread.wakeAt ?? null).toBeNull();
  });

  it("a cron schedule fires once per instant and moves to the next one", async () => {
    const time = handClock("2030-01-07T08:01:00.000Z");
    const runtime = await createTestRuntime({
      agent,
      clock: time.clock,
      model: [{ text: "first" }, { text: "second" }],
    });
    open.push(runtime);
    const threadId = await runtime.createThread();
    const schedule = await runtime.pai.trusted.schedule({
      threadId,
      scope,
      cron: "*/15 * * * *",
      message: "Check the queue.",
    });
    expect(schedule.nextAt).toBe("2030-01-07T08:15:00.000Z");
    time.set("2030-01-07T08:20:00.000Z");
    await Promise.all([runtime.pai.recover(), runtime.pai.recover()]);
    await runtime.pai.waitForIdle(threadId);
    let snapshot = await runtime.snapshot(threadId);
    expect(snapshot.runs).toHaveLength(1);
    expect(snapshot.thread.schedules?.[0]).toMatchObject({ fired: 1, nextAt: "2030-01-07T08:30:00.000Z" });
    time.set("2030-01-07T08:30:00.000Z");
    await runtime.pai.recover();
    await runtime.pai.waitForIdle(threadId);
    snapshot = await runtime.snapshot(threadId);
    expect(snapshot.runs.map((run) => run.status)).toEqual(["completed", "completed"]);
    expect(snapshot.thread.schedules?.[0]).toMatchObject({ fired: 2, state: "active" });
  });

  it("a schedule survives a restart and fires once when two runtimes wake it together", async () => {
    const time = handClock();
    const storage = memoryStorage();
    const first = await createTestRuntime({ agent, storage, clock: time.clock, model: [] });
    const threadId = await first.createThread();
    await first.pai.trusted.schedule({
      threadId,
      scope,
      at: "2030-01-07T08:30:00.000Z",
      message: "Wake up.",
    });
    await first.close();
    time.set("2030-01-07T08:31:00.000Z");
    const second = await createTestRuntime({ agent, storage, clock: time.clock, model: [{ text: "awake" }] });
    const third = await createTestRuntime({ agent, storage, clock: time.clock, model: [{ text: "awake" }] });
    open.push(second, third);
    await Promise.all([second.pai.recover(), third.pai.recover()]);
    await Promise.all([second.pai.waitForIdle(threadId), third.pai.waitForIdle(threadId)]);
    const snapshot = await second.snapshot(threadId);
    expect(snapshot.runs).toHaveLength(1);
    expect(texts(snapshot, "user")).toEqual(["Wake up."]);
    expect(snapshot.thread.schedules?.[0]).toMatchObject({ fired: 1, state: "done" });
  });

  it("a cancelled schedule never fires; cancelling twice or an unknown id is refused", async () => {
    const time = handClock();
    const runtime = await createTestRuntime({ agent, clock: time.clock, model: [] });
    open.push(runtime);
    const threadId = await runtime.createThread();
    const schedule = await runtime.pai.trusted.schedule({
      threadId,
      scope,
      cron: "0 9 * * 1-5",
      message: "Standup.",
    });
    const cancelled = await runtime.pai.trusted.cancelSchedule({
      threadId,
      scope,
      scheduleId: schedule.scheduleId,
    });
    expect(cancelled).toMatchObject({
      state: "cancelled",
      nextAt: null,
      cancelledAt: "2030-01-07T08:00:00.000Z",
    });
    expect((await runtime.snapshot(threadId)).thread.wakeAt ?? null).toBeNull();
    time.set("2030-01-08T10:00:00.000Z");
    await runtime.pai.recover();
    expect((await runtime.snapshot(threadId)).runs).toEqual([]);
    await expect(
      runtime.pai.trusted.cancelSchedule({ threadId, scope, scheduleId: schedule.scheduleId }),
    ).rejects.toSatisfy(code("CONFLICT"));
    await expect(
      runtime.pai.trusted.cancelSchedule({ threadId, scope, scheduleId: "nope" }),
    ).rejects.toSatisfy(code("NOT_FOUND"));
  });

  it("refuses bad schedules and other tenants' threads", async () => {
    const runtime = await createTestRuntime({ agent, model: [] });
    open.push(runtime);
    const threadId = await runtime.createThread();
    const bad = [
      { message: "x" },
      { message: "x", at: "2030-01-01T00:00:00Z", cron: "* * * * *" },
      { message: "x", at: "not a date" },
      { message: "x", cron: "every day" },
      { message: "x", cron: "61 * * * *" },
      { message: "x", cron: "0 9 * * *", timezone: "Mars/Olympus" },
      { message: "", at: "2030-01-01T00:00:00Z" },
    ];
    for (const input of bad) {
      await expect(runtime.pai.trusted.schedule({ threadId, scope, ...input } as never)).rejects.toSatisfy(
        code("INVALID_INPUT"),
      );
    }
    await expect(
      runtime.pai.trusted.schedule({ threadId, scope: { scopeKey: "other" }, at: new Date(), message: "x" }),
    ).rejects.toSatisfy(code("NOT_FOUND"));
    expect((await runtime.snapshot(threadId)).thread.schedules ?? []).toEqual([]);
  });

  it("ctx.trigger with a time schedules the notification instead of running now", async () => {
    const time = handClock();
    const remind = defineTool({
      id: "test.remind.v1",
      description: "Sets a reminder",
      inputSchema: z.object({ at: z.string() }),
      outputSchema: z.object({ scheduleId: z.string() }),
      execute: async (ctx) => {
        const scheduled = (await ctx.trigger({ notification: "Time to follow up.", at: ctx.input.at })) as {
          scheduleId: string;
        };
        return { scheduleId: scheduled.scheduleId };
      },
    });
    const runtime = await createTestRuntime({
      agent: defineAgent({ tools: { remind } }),
      clock: time.clock,
      model: [
        { toolCalls: [{ toolName: "remind", toolCallId: "c-1", input: { at: "2030-01-07T12:00:00.000Z" } }] },
        { text: "I will remind you at noon." },
        { text: "Following up now." },
      ],
    });
    open.push(runtime);
    const threadId = await runtime.createThread();
    const done = await runtime.send(threadId, "remind me at noon");
    expect(done.runs).toHaveLength(1);
    expect(done.thread.schedules).toEqual([
      expect.objectContaining({
        state: "active",
        nextAt: "2030-01-07T12:00:00.000Z",
        message: "Time to follow up.",
      }),
    ]);
    time.set("2030-01-07T12:00:01.000Z");
    await runtime.pai.recover();
    await runtime.pai.waitForIdle(threadId);
    const after = await runtime.snapshot(threadId);
    expect(after.runs.map((run) => run.status)).toEqual(["completed", "completed"]);
    expect(texts(after, "assistant").at(-1)).toBe("Following up now.");
  });
});
