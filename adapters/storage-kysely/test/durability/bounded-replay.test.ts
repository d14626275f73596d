import { monitorEventLoopDelay } from "node:perf_hooks";
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { createPai, defineAgent, type MessageRow, type ThreadEvent } from "@pai/core";
import { makeMessageRow, makeThreadRow } from "@pai/core/testing";
import { Kysely, PostgresDialect } from "kysely";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { kyselyStorage, migrateToLatest } from "../../src/index.js";
import { openEngine } from "../support/engines.js";
import { postgresUrl } from "./worker-process.js";

/**
 * 2400 committed batches of ~4.3 KB (one message update of 32 text parts, like a step of a
 * streamed answer): an event log of ~10 MB made of many small JSON objects, as real logs are.
 */
const BATCHES = 2400;
const PARTS = 32;
const PART_CHARS = 100;
const WATCHERS = 20;
/**
 * Unpaged, each watcher holds its whole log (the driver's rows, then the decoded batches) until
 * it has yielded the last one, and the 20 replays run at once: RSS grew by 135-175 MB. Paged, a
 * watcher holds one page (64 batches, ~0.3 MB of JSON) at a time, and RSS grew by 6-15 MB. The
 * heap is collected every 100 ms while measuring, so the number is what the replay holds, not
 * how much garbage V8 chose to let pile up first (left alone, V8 grew RSS by 115-170 MB paged
 * and 190-255 MB unpaged). 60 MB is 4x what paging needs and under half what unpaged took.
 */
const MAX_RSS_GROWTH_MB = 60;
/**
 * A bound on stalls, not on CPU: unpaged, collecting a heap that holds 20 full logs stalled the
 * event loop for 0.4-1 s at a time (the more so the busier the machine); paged, the worst delay
 * was 0.09-0.35 s, mostly the OS running the 20 Postgres backends on the same 2-core machine.
 * 500 ms leaves the paged replay room on a loaded CI machine; the RSS bound is the sharp check.
 */
const MAX_EVENT_LOOP_LAG_MS = 500;

const MB = 1024 * 1024;
const identity = { scopeKey: "replay", userKey: "tester" };

/** `global.gc` even when node was started without `--expose-gc`. */
function collectGarbage(): () => void {
  const exposed = (globalThis as { gc?: () => void }).gc;
  if (exposed) return exposed;
  setFlagsFromString("--expose-gc");
  return runInNewContext("gc") as () => void;
}

function partText(version: number, part: number): string {
  const head = `version ${version} part ${part} `;
  return head + "lorem ipsum dolor sit amet ".repeat(4).slice(0, PART_CHARS - head.length);
}

function messageOf(threadId: string, version: number): MessageRow {
  const parts = Array.from({ length: PARTS }, (_, part) => ({
    type: "text" as const,
    text: partText(version, part),
  }));
  return makeMessageRow({
    threadId,
    messageId: "m1",
    position: 1,
    role: "assistant",
    message: { id: "m1", role: "assistant", parts },
  });
}

describe("bounded replay of a long event log for watch on Postgres", async () => {
  const engine = await openEngine("postgres", "dur_replay");
  if ("skip" in engine) {
    it.skip(`skipped: ${engine.skip}`, () => {});
    return;
  }
  const { prefix } = engine;
  // A connection per watcher, so the replays really run at once and the pool size is not
  // what bounds the memory they hold.
  const db = new Kysely<any>({
    dialect: new PostgresDialect({ pool: new pg.Pool({ connectionString: postgresUrl, max: WATCHERS }) }),
  });
  const storage = kyselyStorage({ db, tablePrefix: prefix });
  const pai = createPai({
    agents: { replay: defineAgent({}) },
    storage,
    // Explicit, so this compiles whether or not `scope` becomes required for such identities.
    scope: (identity: { scopeKey: string }) => ({ scopeKey: identity.scopeKey }),
  });
  const threadId = "long-log";
  const gc = collectGarbage();

  beforeAll(async () => {
    await migrateToLatest(engine.db, { tablePrefix: prefix });
  });

  afterAll(async () => {
    await pai.close();
    await db.destroy();
    await engine.dispose();
  });

  /** Commits the log straight through the storage port; returns its last version and size. */
  async function writeLog(): Promise<{ lastVersion: number; logBytes: number }> {
    // The first commit creates the thread; every later one rewrites the same message, so the
    // snapshot a watcher is authorized with stays small while the log grows.
    const thread = makeThreadRow({ threadId, scopeKey: identity.scopeKey, agentId: "replay" });
    let version = 0;
    let logBytes = 0;
    for (let batch = 0; batch <= BATCHES; batch++) {
      const next = version + 1;
      const events: ThreadEvent[] =
        batch === 0
          ? [{ type: "thread-updated", thread }]
          : [{ type: "message-upserted", message: messageOf(threadId, next) }];
      const result = await storage.commit({
        threadId,
        expectedVersion: version,
        events,
        now: new Date().toISOString(),
      });
      expect(result).toEqual({ ok: true, version: next });
      logBytes += Buffer.byteLength(JSON.stringify(events), "utf8");
      version = next;
    }
    return { lastVersion: version, logBytes };
  }

  /** WATCHERS concurrent watches from version 0, each ended by its signal after the last version. */
  async function replayAll(lastVersion: number) {
    const started = performance.now();
    const results = await Promise.all(
      Array.from({ length: WATCHERS }, async () => {
        const controller = new AbortController();
        // Only versions and a check per batch are kept, so the test itself holds no log.
        const versions: number[] = [];
        let intact = true;
        for await (const event of pai.service.threads.watch({
          identity,
          threadId,
          afterVersion: 0,
          signal: controller.signal,
        })) {
          if (event.type !== "committed") continue;
          versions.push(event.version);
          if (event.version > 1) {
            const [first] = event.events;
            const parts = first?.type === "message-upserted" ? first.message.message.parts : [];
            const last = parts[PARTS - 1];
            intact &&=
              parts.length === PARTS &&
              last?.type === "text" &&
              last.text.startsWith(`version ${event.version} part ${PARTS - 1} `);
          }
          if (event.version === lastVersion) controller.abort();
        }
        return { versions, intact };
      }),
    );
    return { results, elapsedMs: performance.now() - started };
  }

  function expectEveryVersionOnce(
    results: Array<{ versions: number[]; intact: boolean }>,
    lastVersion: number,
  ) {
    const expected = Array.from({ length: lastVersion }, (_, index) => index + 1);
    expect(results).toHaveLength(WATCHERS);
    for (const result of results) {
      expect(result.versions).toEqual(expected);
      expect(result.intact).toBe(true);
    }
  }

  it(`${WATCHERS} watchers replay a ~10 MB log from version 0 in order, exactly once, with bounded RSS and no event-loop stall`, async () => {
    const { lastVersion, logBytes } = await writeLog();
    expect(logBytes).toBeGreaterThan(9.5 * MB);

    // Memory: RSS before (collected heap) and its peak during the replay.
    gc();
    gc();
    const rssBefore = process.memoryUsage().rss;
    let rssPeak = rssBefore;
    const sampler = setInterval(() => {
      gc();
      rssPeak = Math.max(rssPeak, process.memoryUsage().rss);
    }, 100);
    const memoryPass = await replayAll(lastVersion);
    clearInterval(sampler);
    rssPeak = Math.max(rssPeak, process.memoryUsage().rss);
    const growthMb = (rssPeak - rssBefore) / MB;

    // Event-loop lag: a second replay with nothing forcing collections.
    gc();
    const lag = monitorEventLoopDelay({ resolution: 10 });
    lag.enable();
    const lagPass = await replayAll(lastVersion);
    lag.disable();
    const lagMaxMs = lag.max / 1e6;

    console.log(
      [
        `[durability] bounded replay: ${WATCHERS} concurrent watchers, each replaying ${lastVersion} batches (${(logBytes / MB).toFixed(1)} MB log) from version 0`,
        `  memory pass (${memoryPass.elapsedMs.toFixed(0)} ms): RSS ${(rssBefore / MB).toFixed(0)} MB -> peak ${(rssPeak / MB).toFixed(0)} MB, growth ${growthMb.toFixed(0)} MB (bound ${MAX_RSS_GROWTH_MB} MB)`,
        `  lag pass (${lagPass.elapsedMs.toFixed(0)} ms): event-loop delay max ${lagMaxMs.toFixed(0)} ms, p99 ${(lag.percentile(99) / 1e6).toFixed(0)} ms, mean ${(lag.mean / 1e6).toFixed(0)} ms (bound ${MAX_EVENT_LOOP_LAG_MS} ms)`,
      ].join("\n"),
    );

    expectEveryVersionOnce(memoryPass.results, lastVersion);
    expectEveryVersionOnce(lagPass.results, lastVersion);
    expect(growthMb).toBeLessThan(MAX_RSS_GROWTH_MB);
    expect(lagMaxMs).toBeLessThan(MAX_EVENT_LOOP_LAG_MS);
  });
});
