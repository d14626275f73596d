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
 *
 * `interleave: true` runs the tasks in turns instead: 200 ms of each task per round, in a
 * rotating order, for the same total budget, dropping each turn's first iterations. Tasks
 * compared as a ratio (PAI against the bare SDK doing the same work) then see the same machine:
 * on shared cores whose speed drifts within seconds, task-after-task medians moved the ratio by
 * more than the differences measured. Turns rather than single iterations, because one
 * iteration of a task measures what the one before it left behind (an HTTP round trip's socket
 * work, a larger task's garbage) as much as itself.
 */
export async function measure(
  tasks: Array<{ name: string; fn: () => Promise<unknown> }>,
  options: {
    time?: number;
    iterations?: number;
    warmupIterations?: number;
    warmupTime?: number;
    interleave?: boolean;
  } = {},
): Promise<Measurement[]> {
  const time = options.time ?? 1500;
  const iterations = options.iterations ?? 30;
  const warmupIterations = options.warmupIterations ?? 20;
  const warmupTime = options.warmupTime ?? 3000;
  if (options.interleave) {
    await rounds(tasks, warmupTime * tasks.length, warmupIterations);
    const samples = tasks.map((): number[] => []);
    await rounds(tasks, time * tasks.length, iterations, samples);
    return tasks.map((task, index) => summarize(task.name, samples[index] ?? []));
  }
  const bench = new Bench({ time, iterations, warmupIterations, warmupTime });
  for (const task of tasks) bench.add(task.name, task.fn);
  await bench.warmup();
  await bench.run();
  return bench.tasks.map((task) => {
    const result = task.result as { samples?: number[]; error?: unknown } | undefined;
    if (result?.error) throw result.error;
    return summarize(task.name, result?.samples ?? []);
  });
}

/** How long each task runs in one turn of an interleaved measurement. */
const BLOCK_MS = 200;
/** Iterations dropped at the start of each block: what the previous task left running (sockets, timers, garbage) lands there. */
const SETTLE_ITERATIONS = 5;

/** Rounds of one block per task (the order rotates each round) until both budgets are spent. */
async function rounds(
  tasks: Array<{ fn: () => Promise<unknown> }>,
  budgetMs: number,
  minRounds: number,
  samples?: number[][],
) {
  const start = performance.now();
  const counts = tasks.map(() => 0);
  for (let round = 0; Math.min(...counts) < minRounds || performance.now() - start < budgetMs; round++) {
    for (let offset = 0; offset < tasks.length; offset++) {
      const index = (round + offset) % tasks.length;
      const blockStart = performance.now();
      for (
        let iteration = 0;
        iteration < SETTLE_ITERATIONS || performance.now() - blockStart < BLOCK_MS;
        iteration++
      ) {
        const began = performance.now();
        await tasks[index]!.fn();
        if (iteration < SETTLE_ITERATIONS) continue;
        samples?.[index]?.push(performance.now() - began);
        counts[index]!++;
      }
    }
  }
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
