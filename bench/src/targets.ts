// The round-2 targets (bench/README.md, "Targets and where they stand") read from one run's
// results, so a verdict is printed by the run that measured it instead of copied by hand.
import { log } from "./report.ts";

type Row = { name: string; medianMs: number };
type TwoStepRow = Row & { vsGenerateText: number; vsStreamText: number; floorMs: number | null };
type RoundTripRow = Row & { ratio: number; floorMs: number | null };
type CommitRow = { engine: string; ratio: number };
type ThroughputRow = { concurrency: number; runsPerSecond: number; ceiling?: number };
type GrowthRow = { engine: string; messages: number; ownMs: number };

/** What a full run (or a growth-only run, with `growthRuns`) stored in `results`. */
export type TargetInputs = {
  twoStep?: TwoStepRow[];
  suspendResume?: RoundTripRow[];
  commitStatement?: CommitRow[];
  throughput?: Array<{ engine: string; rows: ThroughputRow[] }>;
  growth?: GrowthRow[];
  growthRuns?: GrowthRow[][];
};

/** `needs three runs`: a growth reading from a single run, which the target cannot judge. */
export type Verdict = "met" | "missed" | "not measured" | "needs three runs";

export type TargetResult = {
  target: string;
  /** The reading, as printed. */
  value: string;
  verdict: Verdict;
  /**
   * Set when an absolute target lies below what the row's floor alone costs on this machine:
   * no PAI code can meet it here, and the ratio to the floor is the reading to follow.
   */
  floorAbove?: string;
};

const GROWTH_LIMIT = 0.2;

const x = (value: number) => `${value.toFixed(2)}x`;
const ms = (value: number) => `${value.toFixed(2)} ms`;

function byName<T extends Row>(rows: T[] | undefined, name: string): T | undefined {
  return rows?.find((row) => row.name === name);
}

function atMost(target: string, reading: number | undefined, limit: number, show: (v: number) => string) {
  if (reading === undefined) return { target, value: "-", verdict: "not measured" as const };
  return { target, value: show(reading), verdict: reading <= limit ? ("met" as const) : ("missed" as const) };
}

/**
 * An absolute latency target, with the row's floor and ratio beside it, and a note when the
 * floor alone exceeds the target.
 */
function withinMs(target: string, row: (Row & { floorMs: number | null }) | undefined, limitMs: number) {
  const result: TargetResult = atMost(target, row?.medianMs, limitMs, ms);
  if (row?.floorMs != null) {
    result.value += ` (floor ${ms(row.floorMs)}, ${x(row.medianMs / row.floorMs)})`;
    if (row.floorMs > limitMs) result.floorAbove = `the floor alone is ${ms(row.floorMs)}`;
  }
  return result;
}

/**
 * How much PAI's share of a turn changed against its share at 10 messages, as a fraction.
 * Undefined when the share at 10 is at or below zero: a change relative to it means nothing.
 */
export function shareGrowth(own: number, ownAt10: number): number | undefined {
  return ownAt10 > 0 ? (own - ownAt10) / ownAt10 : undefined;
}

/** The growth table's reading at 1,000 messages for one engine (see `shareGrowth`). */
export function growthOf(rows: GrowthRow[], engine: string): number | undefined {
  const at = (messages: number) =>
    rows.find((row) => row.engine === engine && row.messages === messages)?.ownMs;
  const small = at(10);
  const large = at(1000);
  return small === undefined || large === undefined ? undefined : shareGrowth(large, small);
}

function growthTarget(engine: string, runs: GrowthRow[][]): TargetResult {
  const target = `growth on ${engine}: share at 1,000 messages within +20% of 10, in three runs`;
  const readings = runs.map((rows) => growthOf(rows, engine));
  if (runs.length === 0 || !runs.some((rows) => rows.some((row) => row.engine === engine)))
    return { target, value: "-", verdict: "not measured" };
  const value = readings
    .map((reading) =>
      reading === undefined ? "n/a" : `${reading >= 0 ? "+" : ""}${(reading * 100).toFixed(0)}%`,
    )
    .join(" / ");
  // One run cannot show the trend holding run after run; a growth-only run gives three.
  if (runs.length < 3)
    return { target, value: `${value} (PAI_BENCH_ONLY=growth runs three)`, verdict: "needs three runs" };
  const met = readings.every((reading) => reading !== undefined && reading <= GROWTH_LIMIT);
  return { target, value, verdict: met ? "met" : "missed" };
}

/** Every round-2 target the inputs hold a reading for, met or missed. */
export function evaluateTargets(inputs: TargetInputs): TargetResult[] {
  const results: TargetResult[] = [];
  const growthRuns = inputs.growthRuns ?? (inputs.growth ? [inputs.growth] : []);
  if (inputs.twoStep || inputs.suspendResume) {
    const memory = byName(inputs.twoStep, "PAI two-step run (memory)");
    const watched = byName(inputs.twoStep, "PAI two-step run, live watcher (memory)");
    const memoryRoundTrip = byName(inputs.suspendResume, "PAI suspend->resume (memory)");
    results.push(
      atMost("memory: two-step run ≤ 1.5x generateText", memory?.vsGenerateText, 1.5, x),
      atMost("memory: suspend -> resume ≤ 2x the SDK's approval round trip", memoryRoundTrip?.ratio, 2, x),
      atMost("memory: two-step run with a live watcher ≤ 0.3x streamText", watched?.vsStreamText, 0.3, x),
    );
  }
  if (inputs.commitStatement) {
    const commit = inputs.commitStatement.find((row) => row.engine === "postgres");
    results.push(atMost("postgres: step commit ≤ 1.5x the durable 1 KB insert", commit?.ratio, 1.5, x));
  }
  if (inputs.twoStep || inputs.suspendResume) {
    results.push(
      withinMs("postgres: two-step run ≤ 4 ms", byName(inputs.twoStep, "PAI two-step run (postgres)"), 4),
      withinMs(
        "postgres: suspend -> resume in process ≤ 5 ms",
        byName(inputs.suspendResume, "PAI suspend->resume (postgres)"),
        5,
      ),
      withinMs(
        "postgres: suspend -> resume over tRPC HTTP ≤ 7 ms",
        byName(inputs.suspendResume, "PAI suspend->resume tRPC HTTP (postgres)"),
        7,
      ),
    );
    // The same flow with a separate send, as passes before the nineteenth measured it.
    const thenSend = byName(inputs.suspendResume, "PAI suspend->resume, create then send (postgres)");
    const thenSendHttp = byName(
      inputs.suspendResume,
      "PAI suspend->resume tRPC HTTP, create then send (postgres)",
    );
    if (thenSend) {
      results.push(withinMs("postgres: the same in process, create then send ≤ 5 ms", thenSend, 5));
    }
    if (thenSendHttp) {
      results.push(withinMs("postgres: the same over tRPC HTTP, create then send ≤ 7 ms", thenSendHttp, 7));
    }
  }
  const grouped = inputs.throughput?.find((entry) => entry.engine === "postgres")?.rows;
  if (grouped) {
    const at = (concurrency: number) => grouped.find((row) => row.concurrency === concurrency);
    const hundred = at(100);
    const ten = at(10);
    const share = hundred?.ceiling ? hundred.runsPerSecond / hundred.ceiling : undefined;
    results.push({
      target: "postgres: 100 concurrent runs ≥ 50% of the commit ceiling",
      value:
        share === undefined
          ? "-"
          : `${(share * 100).toFixed(0)}% (${hundred!.runsPerSecond.toFixed(1)} runs/s)`,
      verdict: share === undefined ? "not measured" : share >= 0.5 ? "met" : "missed",
    });
    results.push({
      target: "postgres: runs/s at 100 concurrent runs never lower than at 10",
      value:
        hundred && ten ? `${hundred.runsPerSecond.toFixed(1)} against ${ten.runsPerSecond.toFixed(1)}` : "-",
      verdict:
        !hundred || !ten ? "not measured" : hundred.runsPerSecond >= ten.runsPerSecond ? "met" : "missed",
    });
  }
  if (growthRuns.length > 0) {
    results.push(growthTarget("memory", growthRuns), growthTarget("postgres", growthRuns));
  }
  return results;
}

/** Prints the targets table at the end of a run. */
export function logTargets(targets: TargetResult[]) {
  if (targets.length === 0) return;
  log();
  log("### Round-2 targets in this run");
  log("| target | reading | verdict |");
  log("|--------|---------|---------|");
  for (const entry of targets) {
    const verdict = entry.floorAbove ? `${entry.verdict} (${entry.floorAbove})` : entry.verdict;
    log(`| ${entry.target} | ${entry.value} | ${verdict} |`);
  }
}
