import type { WatchEvent } from "@pai/core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { kyselyStorage, migrateToLatest, tableNames } from "../../src/index.js";
import { openEngine } from "../support/engines.js";
import { createMarkerTable, dropMarkerTable, type Plan, readMarkers } from "./fixtures/durability-agent.js";
import { assertChildProcessesCanRun, WorkerProcess } from "./worker-process.js";

describe("cross-instance watch over Postgres LISTEN/NOTIFY", async () => {
  const engine = await openEngine("postgres", "dur_watch");
  if ("skip" in engine) {
    it.skip(`skipped: ${engine.skip}`, () => {});
    return;
  }
  const { db, prefix } = engine;
  const storage = kyselyStorage({ db, tablePrefix: prefix });
  // A channel of this test's own, so other suites' notifications never reach these processes.
  const channel = `${prefix}notify`;
  const watcher = new WorkerProcess({ instanceId: "proc-a" });
  const executor = new WorkerProcess({ instanceId: "proc-b", toolDelayMs: [5, 20], modelDelayMs: [5, 20] });
  // A second pair on its own tables: an executor whose commits are never notified (it dies after
  // each commit, before its NOTIFY) and a watcher that only its catch-up reads can serve.
  const quietPrefix = `${prefix}q_`;
  const catchUpWatcher = new WorkerProcess({ instanceId: "proc-c" });
  const silentExecutor = new WorkerProcess({ instanceId: "proc-d", toolDelayMs: [5, 20] });

  beforeAll(async () => {
    assertChildProcessesCanRun();
    await migrateToLatest(db, { tablePrefix: prefix });
    await createMarkerTable(db, prefix);
    await migrateToLatest(db, { tablePrefix: quietPrefix });
    await createMarkerTable(db, quietPrefix);
    await Promise.all([watcher, executor, catchUpWatcher, silentExecutor].map((worker) => worker.ready()));
    await Promise.all(
      [watcher, executor].map((worker) => worker.request("open", { prefix, leaseMs: 2_000, channel })),
    );
    await catchUpWatcher.request("open", {
      prefix: quietPrefix,
      leaseMs: 2_000,
      channel,
      watchCatchUpMs: 200,
    });
    await silentExecutor.request("open", {
      prefix: quietPrefix,
      leaseMs: 2_000,
      channel,
      dropCommitNotifications: true,
    });
  });

  afterAll(async () => {
    await Promise.all([watcher.stop(), executor.stop(), catchUpWatcher.stop(), silentExecutor.stop()]);
    await dropMarkerTable(db, prefix);
    await dropMarkerTable(db, quietPrefix);
    for (const table of Object.values(tableNames(quietPrefix)))
      await db.schema.dropTable(table).ifExists().execute();
    await engine.dispose();
  });

  it("a watcher in process A receives, in order and without gaps, the committed events of runs executed by process B", async () => {
    const threadId = "watched";
    await executor.request("create", { prefix, threadId });
    const start = (await storage.loadThread({ threadId }))!.thread.version;
    const watchId = "w1";
    await watcher.request("watch", { prefix, threadId, afterVersion: start, watchId });
    const received = () =>
      watcher.events
        .filter((event) => event.kind === "watch" && event.watchId === watchId)
        .map((event) => event.item as WatchEvent);

    // Two runs one after another, with tool calls and a suspension resumed in between, all in B.
    const plans: Plan[] = [[["work", "work"], ["work"]], [["approve"]]];
    for (const plan of plans) {
      await executor.request("send", { prefix, threadId, plan });
      await executor.request("idle", { prefix, threadId });
    }
    const parked = (await storage.loadThread({ threadId }))!;
    const action = parked.actions.find((item) => item.state === "pending")!;
    await executor.request("submit", {
      prefix,
      threadId,
      actionId: action.actionId,
      payload: { approved: true },
    });
    await executor.request("idle", { prefix, threadId });

    const final = (await storage.loadThread({ threadId }))!;
    expect(final.runs.map((run) => run.status)).toEqual(["completed", "completed"]);
    const lastVersion = final.thread.version;
    await watcher.waitForEvent(
      (event) =>
        event.kind === "watch" &&
        (event.item as WatchEvent).type === "committed" &&
        (event.item as { version: number }).version === lastVersion,
      10_000,
    );
    await watcher.request("unwatch", { watchId });

    const committed = received().filter(
      (item): item is Extract<WatchEvent, { type: "committed" }> => item.type === "committed",
    );
    const versions = committed.map((item) => item.version);
    expect(versions).toEqual(Array.from({ length: lastVersion - start }, (_, index) => start + index + 1));
    const log = await storage.readEvents({ threadId, afterVersion: start });
    expect(committed.map(({ version, events }) => ({ version, events }))).toEqual(
      log.map(({ version, events }) => ({ version, events })),
    );
    // B executed every call; A only watched.
    const markers = await readMarkers(db, prefix);
    expect(markers.length).toBeGreaterThanOrEqual(5);
    expect(new Set(markers.map((row) => row.instance))).toEqual(new Set(["proc-b"]));
    const live = received().filter((item) => item.type === "live");
    console.log(
      `[durability] cross-instance watch: process A received versions ${versions[0]}..${versions.at(-1)} (${versions.length} commits, ${committed.reduce((sum, item) => sum + item.events.length, 0)} events, no gaps) plus ${live.length} live events from process B`,
    );
  });
  it("a process killed between its commits and their NOTIFYs: a watcher elsewhere still gets every commit, by catching up", async () => {
    const threadId = "unannounced";
    const quietStorage = kyselyStorage({ db, tablePrefix: quietPrefix });
    await silentExecutor.request("create", { prefix: quietPrefix, threadId });
    const start = (await quietStorage.loadThread({ threadId }))!.thread.version;
    const watchId = "w-quiet";
    await catchUpWatcher.request("watch", { prefix: quietPrefix, threadId, afterVersion: start, watchId });
    await silentExecutor.request("send", {
      prefix: quietPrefix,
      threadId,
      plan: [["work", "work"], ["work"]],
    });
    await silentExecutor.request("idle", { prefix: quietPrefix, threadId });
    // SIGKILL: whatever it had not announced stays unannounced.
    await silentExecutor.kill();
    const final = (await quietStorage.loadThread({ threadId }))!;
    expect(final.runs.map((run) => run.status)).toEqual(["completed"]);
    await catchUpWatcher.waitForEvent(
      (event) =>
        event.kind === "watch" &&
        event.watchId === watchId &&
        (event.item as WatchEvent).type === "committed" &&
        (event.item as { version: number }).version === final.thread.version,
      10_000,
    );
    await catchUpWatcher.request("unwatch", { watchId });
    const versions = catchUpWatcher.events
      .filter((event) => event.kind === "watch" && event.watchId === watchId)
      .map((event) => event.item as WatchEvent)
      .filter((item): item is Extract<WatchEvent, { type: "committed" }> => item.type === "committed")
      .map((item) => item.version);
    expect(versions).toEqual(
      Array.from({ length: final.thread.version - start }, (_, index) => start + index + 1),
    );
  });
});
