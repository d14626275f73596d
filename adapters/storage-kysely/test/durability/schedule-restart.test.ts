import { createPai, type DispatchV1, defineAgent, type RuntimeEvent } from "@pai/core";
import { scriptedModel } from "@pai/core/testing";
import { bullMqDispatch } from "@pai/dispatch-bullmq";
import { pgBossDispatch } from "@pai/dispatch-pgboss";
import { kyselyStorage } from "@pai/storage-kysely";
import { Redis } from "ioredis";
import type { Kysely } from "kysely";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openPrefixedPostgres, postgresUrl } from "./worker-process.js";

const redisUrl = process.env.PAI_TEST_REDIS_URL ?? "redis://127.0.0.1:6379";

async function reachable(check: () => Promise<unknown>, what: string): Promise<boolean> {
  try {
    await check();
    return true;
  } catch (error) {
    if (process.env.CI === "true") throw new Error(`${what} is required under CI=true: ${String(error)}`);
    return false;
  }
}

const postgresUp = await reachable(async () => {
  const client = new pg.Client({ connectionString: postgresUrl });
  await client.connect();
  await client.end();
}, "Postgres");
const redisUp = await reachable(async () => {
  const redis = new Redis(redisUrl, { lazyConnect: true, maxRetriesPerRequest: 1 });
  await redis.connect();
  await redis.ping();
  redis.disconnect();
}, "Redis");

const suffix = Math.random().toString(36).slice(2, 8);
const engines = [
  {
    name: "pg-boss",
    up: postgresUp,
    open: (): DispatchV1 & { close(): Promise<void> } =>
      pgBossDispatch({
        connectionString: postgresUrl,
        schema: `pai_boss_sched_${suffix}`,
        queue: `sched-${suffix}`,
        pollingIntervalSeconds: 0.5,
      }),
  },
  {
    name: "bullmq",
    up: postgresUp && redisUp,
    open: (): DispatchV1 & { close(): Promise<void> } =>
      bullMqDispatch({ connection: redisUrl, queue: `sched-${suffix}`, prefix: `pai-sched-${suffix}` }),
  },
];

/**
 * "A schedule survives a restart of every process and fires once": the app that scheduled it
 * is gone (its runtime, its engine connection), and only then do two new worker instances come
 * up, on the same database and engine.
 */
describe.each(engines)("a schedule across a restart of every process ($name)", (engine) => {
  const prefix = `pai_sched_${engine.name.replace("-", "")}_${suffix}_`;
  let db: Kysely<any>;
  let dispose: ((schemas?: string[]) => Promise<void>) | undefined;

  beforeAll(async () => {
    if (!engine.up) return;
    ({ db, dispose } = await openPrefixedPostgres(prefix, 10));
  });

  afterAll(async () => {
    await dispose?.(engine.name === "pg-boss" ? [`pai_boss_sched_${suffix}`] : []);
  });

  it.skipIf(!engine.up)("fires once, in one of the new instances", { timeout: 60_000 }, async () => {
    const agent = defineAgent({ name: "main" });
    const app = (instanceId: string, events: RuntimeEvent[] = []) => {
      const dispatch = engine.open();
      const pai = createPai({
        agents: { main: agent },
        storage: kyselyStorage({ db, tablePrefix: prefix }),
        dispatch,
        instanceId,
        leaseMs: 2_000,
        model: scriptedModel(() => ({ text: "Reminder delivered." })),
        scope: () => ({ scopeKey: "sched" }),
        observers: [(event) => void events.push(event)],
      });
      return { pai, dispatch };
    };
    const first = app("first");
    const thread = await first.pai.trusted.createThread({ scope: { scopeKey: "sched" } });
    const schedule = await first.pai.trusted.schedule({
      threadId: thread.threadId,
      scope: { scopeKey: "sched" },
      at: new Date(Date.now() + 3_000),
      message: "Send the weekly reminder.",
    });
    // Let the wake-up job reach the engine, then every process of the first generation goes.
    await new Promise((resolve) => setTimeout(resolve, 300));
    await first.pai.close();
    await first.dispatch.close();

    const events: RuntimeEvent[] = [];
    const second = app("second", events);
    const third = app("third", events);
    // Recovery sweeps far apart: the firing has to come from the engine's delayed job.
    const workers = [
      await second.pai.startWorker({ recoveryIntervalMs: 60_000 }),
      await third.pai.startWorker({ recoveryIntervalMs: 60_000 }),
    ];
    try {
      const deadline = Date.now() + 40_000;
      for (;;) {
        const snapshot = await second.pai.service.threads.get({
          identity: {},
          threadId: thread.threadId,
        } as never);
        if (snapshot.runs.some((run) => run.status === "completed")) break;
        if (Date.now() > deadline)
          throw new Error(`The schedule did not fire: ${JSON.stringify(snapshot.thread)}`);
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      // Both new instances sweep for due threads too: still one firing.
      await Promise.all([second.pai.recover(), third.pai.recover()]);
      await new Promise((resolve) => setTimeout(resolve, 500));
      const snapshot = await second.pai.service.threads.get({
        identity: {},
        threadId: thread.threadId,
      } as never);
      expect(snapshot.runs).toHaveLength(1);
      expect(snapshot.thread.schedules).toEqual([
        expect.objectContaining({ scheduleId: schedule.scheduleId, state: "done", fired: 1 }),
      ]);
      expect(events.filter((event) => event.type === "run-start")).toHaveLength(1);
    } finally {
      for (const worker of workers) await worker.stop();
      await second.pai.close();
      await third.pai.close();
      await second.dispatch.close();
      await third.dispatch.close();
    }
  });
});
