import type { Pai } from "@pai/core";
import type { StorageCounters } from "./counting-storage.ts";
import type { SqlFloor } from "./floor.ts";

/**
 * `concurrency` workers each run two-step runs back to back for a fixed time; completed runs per
 * second, beside the ceiling the database allows: its durable commits per second at the same
 * number of clients, divided by the commits one run makes.
 */
export async function benchThroughput(
  pai: Pai,
  counters: StorageCounters,
  engine: string,
  floor: SqlFloor | undefined,
  twoStepRun: (pai: Pai) => Promise<unknown>,
  log: (line: string) => void,
) {
  const seconds = 3;
  await Promise.all(Array.from({ length: 10 }, () => twoStepRun(pai)));
  const rows: unknown[] = [];
  for (const concurrency of [1, 10, 100]) {
    let completed = 0;
    const commitsBefore = counters.commits;
    const started = performance.now();
    const deadline = started + seconds * 1000;
    await Promise.all(
      Array.from({ length: concurrency }, async () => {
        while (performance.now() < deadline) {
          await twoStepRun(pai);
          completed++;
        }
      }),
    );
    const elapsed = (performance.now() - started) / 1000;
    const commitsPerRun = (counters.commits - commitsBefore) / Math.max(1, completed);
    const commitCeiling = floor?.ceiling.find((entry) => entry.clients === concurrency)?.commitsPerSecond;
    const ceiling = commitCeiling === undefined ? undefined : commitCeiling / commitsPerRun;
    const runsPerSecond = completed / elapsed;
    rows.push({ concurrency, seconds: elapsed, runs: completed, runsPerSecond, commitsPerRun, ceiling });
    const share = ceiling === undefined ? "-" : `${((runsPerSecond / ceiling) * 100).toFixed(0)}%`;
    log(
      `| ${engine.padEnd(8)} | ${String(concurrency).padStart(11)} | ${String(completed).padStart(4)} | ${runsPerSecond.toFixed(1).padStart(11)} | ${commitsPerRun.toFixed(1).padStart(11)} | ${(ceiling?.toFixed(0) ?? "-").padStart(14)} | ${share.padStart(13)} |`,
    );
  }
  await pai.close();
  return rows;
}
