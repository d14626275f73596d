// One PAI commit against the database's durable 1 KB insert: the statement a step waits on,
// measured alone (no runtime, no model), in the same run as the floor.
import { makeMessageRow, makeRunRow, makeThreadRow } from "@pai/core/testing";
import type { BenchEngine } from "./engines.ts";
import { insertOne, openFloorTable, type SqlFloor } from "./floor.ts";
import { formatMs, type Measurement, summarize } from "./harness.ts";
import { log, results } from "./report.ts";

const now = () => new Date().toISOString();

/**
 * A step-shaped commit on one thread: the assistant message of the step (about 1 KB of text) and
 * its run row, against the thread's version. The thread grows by one message per commit, as a
 * long conversation does.
 */
async function stepCommits(engine: BenchEngine) {
  const threadId = `bench-commit-${globalThis.crypto.randomUUID()}`;
  const runId = `run-${threadId}`;
  const created = now();
  const thread = makeThreadRow({
    threadId,
    scopeKey: "bench",
    status: "running",
    createdAt: created,
    updatedAt: created,
  });
  const first = await engine.storage.commit({
    threadId,
    expectedVersion: 0,
    now: created,
    events: [{ type: "thread-updated", thread }],
  });
  if (!first.ok) throw new Error("bench: creating the commit thread conflicted");
  let version = first.version;
  let step = 0;
  return async () => {
    step++;
    const at = now();
    const messageId = `m-${step}`;
    const message = makeMessageRow({
      threadId,
      messageId,
      position: step,
      role: "assistant",
      text: "x".repeat(1024),
      runId,
      createdAt: at,
      updatedAt: at,
    });
    const run = makeRunRow({ threadId, runId, step, messageId, createdAt: created, updatedAt: at });
    const result = await engine.storage.commit({
      threadId,
      expectedVersion: version,
      now: at,
      events: [
        { type: "message-upserted", message },
        { type: "run-upserted", run },
      ],
    });
    if (!result.ok) throw new Error("bench: a step commit conflicted");
    version = result.version;
  };
}

/**
 * Runs `a` and `b` in turn, one of each per round, so both see the same server state. Measured
 * apart, the commit ran minutes after the floor's insert, just after the ceiling runs had
 * written a few hundred MB of WAL (a checkpoint and autovacuum of the floor table in progress):
 * the ratio then measured the server's state, not the statement.
 */
async function paired(
  a: () => Promise<unknown>,
  b: () => Promise<unknown>,
  { warmupMs = 1000, timeMs = 3000 } = {},
): Promise<[Measurement, Measurement]> {
  const samples: [number[], number[]] = [[], []];
  const run = async (record: boolean) => {
    for (const [index, fn] of [a, b].entries()) {
      const started = performance.now();
      await fn();
      if (record) samples[index]!.push(performance.now() - started);
    }
  };
  const warmEnd = performance.now() + warmupMs;
  while (performance.now() < warmEnd) await run(false);
  const end = performance.now() + timeMs;
  while (performance.now() < end) await run(true);
  return [summarize("PAI step commit", samples[0]), summarize("durable 1 KB insert", samples[1])];
}

export async function benchCommitStatement(engines: BenchEngine[], floors: Map<string, SqlFloor>) {
  log();
  log("### One PAI step commit (a 1 KB message and its run row) against the durable 1 KB insert");
  log(
    "| engine   | PAI commit ms | p95 ms | iters | 1 KB insert, same rounds ms | commit vs insert | floor table's insert ms |",
  );
  log(
    "|----------|--------------:|-------:|------:|----------------------------:|-----------------:|------------------------:|",
  );
  const rows: unknown[] = [];
  for (const engine of engines) {
    const floor = floors.get(engine.name);
    if (!floor || !engine.sql) continue;
    const { db } = engine.sql;
    const { table, drop } = await openFloorTable(db, "pair");
    const commit = await stepCommits(engine);
    const [measured, insert] = await paired(commit, () => insertOne(db, table));
    await drop();
    const ratio = measured.medianMs / insert.medianMs;
    rows.push({
      engine: engine.name,
      commit: measured,
      insert1k: insert,
      floorInsert1kMs: floor.insert1k.medianMs,
      ratio,
    });
    log(
      `| ${engine.name.padEnd(8)} | ${formatMs(measured.medianMs).padStart(13)} | ${formatMs(measured.p95Ms).padStart(6)} | ${String(measured.iterations).padStart(5)} | ${formatMs(insert.medianMs).padStart(27)} | ${`${ratio.toFixed(2)}x`.padStart(16)} | ${formatMs(floor.insert1k.medianMs).padStart(23)} |`,
    );
  }
  results.commitStatement = rows;
}
