import type { Pai } from "@pai/core";

/** `concurrency` workers each run two-step runs back to back for a fixed time; completed runs per second. */
export async function benchThroughput(
  pai: Pai,
  engine: string,
  twoStepRun: (pai: Pai) => Promise<unknown>,
  log: (line: string) => void,
) {
  const seconds = 3;
  await Promise.all(Array.from({ length: 10 }, () => twoStepRun(pai)));
  const rows: unknown[] = [];
  for (const concurrency of [1, 10, 100]) {
    let completed = 0;
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
    rows.push({ concurrency, seconds: elapsed, runs: completed, runsPerSecond: completed / elapsed });
    log(
      `| ${engine.padEnd(8)} | ${String(concurrency).padStart(11)} | ${String(completed).padStart(4)} | ${(completed / elapsed).toFixed(1).padStart(11)} |`,
    );
  }
  await pai.close();
  return rows;
}
