import { describe, expect, it } from "vitest";
import { evaluateTargets, growthOf, type TargetInputs } from "./targets.ts";

const row = (name: string, medianMs: number, extra: Record<string, unknown> = {}) => ({
  name,
  medianMs,
  floorMs: null,
  ...extra,
});

const growth = (engine: string, at10: number, at1000: number) => [
  { engine, messages: 10, ownMs: at10 },
  { engine, messages: 100, ownMs: at10 },
  { engine, messages: 1000, ownMs: at1000 },
];

const fullRun: TargetInputs = {
  twoStep: [
    row("PAI two-step run (memory)", 0.2, { vsGenerateText: 0.9, vsStreamText: 0.1 }),
    row("PAI two-step run, live watcher (memory)", 0.4, { vsGenerateText: 1.6, vsStreamText: 0.31 }),
    row("PAI two-step run (postgres)", 4.5, { vsGenerateText: 20, vsStreamText: 2, floorMs: 4.2 }),
  ] as never,
  suspendResume: [
    row("PAI suspend->resume (memory)", 0.4, { ratio: 1.3 }),
    row("PAI suspend->resume (postgres)", 4.9, { ratio: 15, floorMs: 3.1 }),
    row("PAI suspend->resume tRPC HTTP (postgres)", 9, { ratio: 30, floorMs: 7.5 }),
  ] as never,
  commitStatement: [
    { engine: "pglite", ratio: 4 },
    { engine: "postgres", ratio: 1.34 },
  ],
  throughput: [
    {
      engine: "postgres",
      rows: [
        { concurrency: 10, runsPerSecond: 700, ceiling: 1300 },
        { concurrency: 100, runsPerSecond: 650, ceiling: 1200 },
      ],
    },
  ],
  growth: [...growth("memory", 0.1, 0.11), ...growth("postgres", 3, 3.1)],
};

describe("evaluateTargets", () => {
  const verdicts = Object.fromEntries(evaluateTargets(fullRun).map((entry) => [entry.target, entry]));

  it("reads the ratio targets against their limits", () => {
    expect(verdicts["memory: two-step run ≤ 1.5x generateText"]).toMatchObject({
      value: "0.90x",
      verdict: "met",
    });
    expect(verdicts["memory: two-step run with a live watcher ≤ 0.3x streamText"]).toMatchObject({
      value: "0.31x",
      verdict: "missed",
    });
    // Only the Postgres engine's commit row counts.
    expect(verdicts["postgres: step commit ≤ 1.5x the durable 1 KB insert"]).toMatchObject({
      verdict: "met",
    });
  });

  it("prints an absolute target's floor and says when the floor alone is above the target", () => {
    expect(verdicts["postgres: two-step run ≤ 4 ms"]).toMatchObject({
      value: "4.50 ms (floor 4.20 ms, 1.07x)",
      verdict: "missed",
      floorAbove: "the floor alone is 4.20 ms",
    });
    expect(verdicts["postgres: suspend -> resume in process ≤ 5 ms"]).toMatchObject({ verdict: "met" });
    expect(verdicts["postgres: suspend -> resume in process ≤ 5 ms"]?.floorAbove).toBeUndefined();
    expect(verdicts["postgres: suspend -> resume over tRPC HTTP ≤ 7 ms"]).toMatchObject({
      verdict: "missed",
      floorAbove: "the floor alone is 7.50 ms",
    });
  });

  it("judges the create-then-send flow on its own lines, only when the run measured it", () => {
    const [inProcess, overHttp] = evaluateTargets({
      suspendResume: [
        row("PAI suspend->resume, create then send (postgres)", 5.2, { ratio: 16, floorMs: 3.4 }),
        row("PAI suspend->resume tRPC HTTP, create then send (postgres)", 6.9, { ratio: 25, floorMs: 6 }),
      ] as never,
    }).filter((entry) => entry.target.includes("create then send"));
    expect(inProcess).toMatchObject({
      target: "postgres: the same in process, create then send ≤ 5 ms",
      verdict: "missed",
    });
    expect(overHttp).toMatchObject({
      target: "postgres: the same over tRPC HTTP, create then send ≤ 7 ms",
      verdict: "met",
    });
    expect(Object.keys(verdicts).some((target) => target.includes("create then send"))).toBe(false);
  });

  it("reads throughput as a share of the ceiling and the 100-against-10 order", () => {
    expect(verdicts["postgres: 100 concurrent runs ≥ 50% of the commit ceiling"]).toMatchObject({
      value: "54% (650.0 runs/s)",
      verdict: "met",
    });
    expect(verdicts["postgres: runs/s at 100 concurrent runs never lower than at 10"]).toMatchObject({
      value: "650.0 against 700.0",
      verdict: "missed",
    });
  });

  it("never judges growth on one run: the target asks for three in a row", () => {
    expect(
      verdicts["growth on memory: share at 1,000 messages within +20% of 10, in three runs"],
    ).toMatchObject({
      value: "+10% (PAI_BENCH_ONLY=growth runs three)",
      verdict: "needs three runs",
    });
  });

  it("meets growth only when all three runs are within +20%, and a share at or below zero is no reading", () => {
    const within = [growth("memory", 0.1, 0.115), growth("memory", 0.1, 0.09), growth("memory", 0.1, 0.12)];
    const [met] = evaluateTargets({ growthRuns: within });
    expect(met).toMatchObject({ value: "+15% / -10% / +20%", verdict: "met" });
    const [withNoReading] = evaluateTargets({
      growthRuns: [within[0]!, growth("memory", -0.01, 0.05), within[2]!],
    });
    expect(withNoReading).toMatchObject({ value: "+15% / n/a / +20%", verdict: "missed" });
    expect(growthOf(growth("memory", 0, 0.05), "memory")).toBeUndefined();
  });

  it("evaluates only the sections a partial run measured", () => {
    expect(evaluateTargets({ commitStatement: [{ engine: "postgres", ratio: 1.6 }] })).toEqual([
      { target: "postgres: step commit ≤ 1.5x the durable 1 KB insert", value: "1.60x", verdict: "missed" },
    ]);
    expect(evaluateTargets({})).toEqual([]);
  });
});
