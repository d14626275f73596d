import { Bench } from "tinybench";

export type Measurement = {
  name: string;
  iterations: number;
  medianMs: number;
  p95Ms: number;
  meanMs: number;
};

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  const index = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[index] as number;
}

/**
 * Measures async tasks with tinybench (warmup first, then a time/iteration budget) and
 * reports median and p95 computed from the raw samples. The warm-up is long on purpose: a PAI
 * run touches far more code than one bare `generateText`, and V8 needs thousands of runs to
 * optimize it all; a 300 ms warm-up measured JIT tiers, not steady state.
 */
export async function measure(
  tasks: Array<{ name: string; fn: () => Promise<unknown> }>,
  options: { time?: number; iterations?: number; warmupIterations?: number; warmupTime?: number } = {},
): Promise<Measurement[]> {
  const bench = new Bench({
    time: options.time ?? 1500,
    iterations: options.iterations ?? 30,
    warmupIterations: options.warmupIterations ?? 20,
    warmupTime: options.warmupTime ?? 3000,
  });
  for (const task of tasks) bench.add(task.name, task.fn);
  await bench.warmup();
  await bench.run();
  return bench.tasks.map((task) => {
    const result = task.result as { samples?: number[]; error?: unknown } | undefined;
    if (result?.error) throw result.error;
    return summarize(task.name, result?.samples ?? []);
  });
}

/** Median, p95 and mean of raw samples (ms), as `measure` reports them. */
export function summarize(name: string, raw: number[]): Measurement {
  const samples = [...raw].sort((a, b) => a - b);
  const mean = samples.reduce((sum, value) => sum + value, 0) / Math.max(1, samples.length);
  return {
    name,
    iterations: samples.length,
    medianMs: percentile(samples, 50),
    p95Ms: percentile(samples, 95),
    meanMs: mean,
  };
}

export function formatMs(value: number): string {
  return Number.isFinite(value) ? value.toFixed(value < 1 ? 3 : 2) : "n/a";
}
