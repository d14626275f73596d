// Storage calls and SQL statements of one two-step run, per committed model step.
import { countingStorage } from "./counting-storage.ts";
import type { BenchEngine } from "./engines.ts";
import { log, results } from "./report.ts";
import { identity, runtimeOn } from "./scenarios.ts";

export /** Storage calls of one two-step run, divided by its committed model steps (2). */
async function benchRoundTrips(engines: BenchEngine[]) {
  log();
  log("### Storage round trips per committed model step (two-step run; thread creation excluded)");
  log(
    "| engine   | calls/run | commits/run | calls per step | SQL statements/run | SQL per step | by method |",
  );
  log(
    "|----------|----------:|------------:|---------------:|-------------------:|-------------:|-----------|",
  );
  const rows: unknown[] = [];
  for (const engine of engines) {
    const counting = countingStorage(engine.storage);
    const pai = runtimeOn(counting.storage, "add");
    const runs = 20;
    let calls = 0;
    let commits = 0;
    let statements = 0;
    const byMethod: Record<string, number> = {};
    for (let index = 0; index < runs; index++) {
      const thread = await pai.service.threads.create({ identity });
      counting.reset();
      const statementsBefore = engine.statements?.count ?? 0;
      await pai.service.threads.send({ identity, threadId: thread.threadId, message: { text: "1+2?" } });
      await pai.waitForIdle(thread.threadId);
      statements += (engine.statements?.count ?? 0) - statementsBefore;
      calls += counting.counters.calls;
      commits += counting.counters.commits;
      for (const [method, count] of Object.entries(counting.counters.byMethod)) {
        byMethod[method] = (byMethod[method] ?? 0) + count;
      }
    }
    await pai.close();
    const methods = Object.entries(byMethod)
      .map(([method, count]) => `${method} ${(count / runs).toFixed(1)}`)
      .join(", ");
    const sql = engine.statements ? (statements / runs).toFixed(1) : "-";
    const sqlPerStep = engine.statements ? (statements / runs / 2).toFixed(1) : "-";
    log(
      `| ${engine.name.padEnd(8)} | ${(calls / runs).toFixed(1).padStart(9)} | ${(commits / runs).toFixed(1).padStart(11)} | ${(calls / runs / 2).toFixed(1).padStart(14)} | ${sql.padStart(18)} | ${sqlPerStep.padStart(12)} | ${methods} |`,
    );
    rows.push({
      engine: engine.name,
      callsPerRun: calls / runs,
      commitsPerRun: commits / runs,
      sqlStatementsPerRun: engine.statements ? statements / runs : null,
      byMethod,
    });
  }
  results.roundTrips = rows;
}
