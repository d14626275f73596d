// The bench's printed tables and results.json, shared by every table's module.
import { formatMs, type Measurement } from "./harness.ts";

export const results: Record<string, unknown> = {
  startedAt: new Date().toISOString(),
  node: process.version,
};
export const lines: string[] = [];
export const log = (line = "") => {
  lines.push(line);
  console.log(line);
};

const ratioOf = (measurement: Measurement, baseline?: Measurement | number) => {
  if (baseline === undefined) return "-";
  const base = typeof baseline === "number" ? baseline : baseline.medianMs;
  return `${(measurement.medianMs / base).toFixed(2)}x`;
};

/**
 * One latency row: median, p95, iterations, the ratio to each baseline (`-` where a baseline
 * does not apply), and the floor in ms when the row has one.
 */
export function row(
  measurement: Measurement,
  baselines: Array<Measurement | number | undefined>,
  floorMs?: number,
) {
  const ratios = baselines.map((baseline) => ratioOf(measurement, baseline).padStart(8)).join(" | ");
  const floor = floorMs === undefined ? "-" : formatMs(floorMs);
  return `| ${measurement.name.padEnd(40)} | ${formatMs(measurement.medianMs).padStart(9)} | ${formatMs(measurement.p95Ms).padStart(8)} | ${String(measurement.iterations).padStart(5)} | ${ratios} | ${floor.padStart(8)} | ${(floorMs === undefined ? "-" : ratioOf(measurement, floorMs)).padStart(8)} |`;
}

export function tableHeader(title: string, baselines: string[]) {
  log();
  log(`### ${title}`);
  log(
    `| scenario                                 | median ms |   p95 ms | iters | ${baselines.map((name) => name.padStart(8)).join(" | ")} | floor ms | vs floor |`,
  );
  log(
    `|------------------------------------------|----------:|---------:|------:|${baselines.map(() => "---------:").join("|")}|---------:|---------:|`,
  );
}
