// One PAI commit against the database's durable 1 KB insert: the statement a step waits on,
// measured alone (no runtime, no model), in the same run as the floor.
import { makeMessageRow, makeRunRow, makeThreadRow } from "@pai/core/testing";
import type { BenchEngine } from "./engines.ts";
import type { SqlFloor } from "./floor.ts";
import { formatMs, measure } from "./harness.ts";
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

export async function benchCommitStatement(engines: BenchEngine[], floors: Map<string, SqlFloor>) {
  log();
  log("### One PAI step commit (a 1 KB message and its run row) against the durable 1 KB insert");
  log("| engine   | PAI commit ms | p95 ms | iters | durable 1 KB insert ms | commit vs insert |");
  log("|----------|--------------:|-------:|------:|-----------------------:|-----------------:|");
  const rows: unknown[] = [];
  for (const engine of engines) {
    const floor = floors.get(engine.name);
    if (!floor) continue;
    const commit = await stepCommits(engine);
    const [measured] = await measure([{ name: `${engine.name}: PAI step commit`, fn: commit }], {
      warmupTime: 1000,
    });
    const ratio = measured!.medianMs / floor.insert1k.medianMs;
    rows.push({ engine: engine.name, commit: measured, insert1kMs: floor.insert1k.medianMs, ratio });
    log(
      `| ${engine.name.padEnd(8)} | ${formatMs(measured!.medianMs).padStart(13)} | ${formatMs(measured!.p95Ms).padStart(6)} | ${String(measured!.iterations).padStart(5)} | ${formatMs(floor.insert1k.medianMs).padStart(22)} | ${`${ratio.toFixed(2)}x`.padStart(16)} |`,
    );
  }
  results.commitStatement = rows;
}
