/**
 * `npm run bench:types`: the type-check cost of a PAI agent and a typed client file as the
 * tool count grows, against the same schemas with the plain AI SDK `tool()` and a UIMessage
 * parts loop. Each project is checked by its own `tsc --noEmit --extendedDiagnostics` run,
 * against the published declarations (`dist`) of @pai/core and @pai/client.
 */
import { mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { type PaiNarrowing, paiAgentSource, paiClientSource } from "./generate-pai.ts";
import { sdkAgentSource, sdkClientSource } from "./generate-sdk.ts";
import { toolSpecs } from "./tool-specs.ts";
import { type CheckResult, checkProject, writeProject } from "./tsc.ts";

const repo = fileURLToPath(new URL("../../../", import.meta.url));
const sizes = (process.env.PAI_BENCH_TYPES_SIZES ?? "50,100,200").split(",").map(Number);
const runs = Math.max(1, Number(process.env.PAI_BENCH_TYPES_RUNS ?? 1));
const narrowing = (process.env.PAI_BENCH_TYPES_GUARD ?? "type") as PaiNarrowing;
const keep = process.env.PAI_BENCH_TYPES_KEEP === "1";

function newestMtime(dir: string): number {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) newest = Math.max(newest, newestMtime(path));
    else if (entry.name.endsWith(".ts")) newest = Math.max(newest, statSync(path).mtimeMs);
  }
  return newest;
}

/** The generated projects import the packages' `dist`; measuring a stale one would mislead. */
function checkDist(pkg: string): void {
  const entry = join(repo, pkg, "dist/index.d.ts");
  let built: number;
  try {
    built = statSync(entry).mtimeMs;
  } catch {
    throw new Error(`${entry} is missing: run \`npm run build -w @pai/core -w @pai/client\` first.`);
  }
  if (newestMtime(join(repo, pkg, "src")) > built) {
    console.warn(`warning: ${pkg}/src is newer than ${pkg}/dist; rebuild it to measure the current types.`);
  }
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}

async function measure(dir: string): Promise<CheckResult> {
  const results: CheckResult[] = [];
  for (let run = 0; run < runs; run++) results.push(await checkProject(dir));
  const pick = (key: keyof CheckResult) => median(results.map((result) => result[key]));
  return {
    checkSeconds: pick("checkSeconds"),
    totalSeconds: pick("totalSeconds"),
    instantiations: pick("instantiations"),
    memoryMiB: pick("memoryMiB"),
  };
}

function writeSide(dir: string, agent: string, client: string): void {
  mkdirSync(dir);
  writeFileSync(join(dir, "agent.ts"), agent);
  writeFileSync(join(dir, "client.ts"), client);
  writeProject(dir, ["agent.ts", "client.ts"]);
}

type Row = { tools: number; pai: CheckResult; sdk: CheckResult };

const ratio = (value: number, base: number) => `${(value / base).toFixed(2)}x`;
const cells = (result: CheckResult) => [
  result.checkSeconds.toFixed(2),
  String(result.instantiations),
  result.memoryMiB.toFixed(0),
];

function printTable(rows: Row[]): void {
  const header = [
    "tools",
    "PAI check s",
    "PAI instantiations",
    "PAI MiB",
    "SDK check s",
    "SDK instantiations",
    "SDK MiB",
    "time ratio",
    "inst. ratio",
    "memory ratio",
  ];
  console.log(`\n### Type-check cost: PAI agent + client (${narrowing}) vs plain AI SDK\n`);
  console.log(`| ${header.join(" | ")} |`);
  console.log(`|${header.map(() => "---:").join("|")}|`);
  for (const { tools, pai, sdk } of rows) {
    const line = [
      String(tools),
      ...cells(pai),
      ...cells(sdk),
      ratio(pai.checkSeconds, sdk.checkSeconds),
      ratio(pai.instantiations, sdk.instantiations),
      ratio(pai.memoryMiB, sdk.memoryMiB),
    ];
    console.log(`| ${line.join(" | ")} |`);
  }
}

function printGrowth(rows: Row[]): void {
  const first = rows[0]!;
  const last = rows.at(-1)!;
  if (first === last) return;
  const perTool = (row: Row, side: "pai" | "sdk") => row[side].checkSeconds / row.tools;
  const growth = perTool(last, "pai") / perTool(first, "pai");
  const sdkGrowth = perTool(last, "sdk") / perTool(first, "sdk");
  // Per-tool time may rise a little from cache effects; 1.25x leaves room for noise, not for n².
  const verdict = growth <= 1.25 ? "linear" : "NOT linear";
  console.log(
    `\nGrowth: PAI check time per tool at ${last.tools} vs ${first.tools} tools: ${growth.toFixed(2)}x (${verdict}; plain AI SDK ${sdkGrowth.toFixed(2)}x).`,
  );
  // Fixed costs (lib and package declarations) keep time per tool falling for a while even when
  // the cost per added tool rises; the marginal cost shows that.
  const marginal = (side: "pai" | "sdk") =>
    rows
      .slice(1)
      .map((row, index) => {
        const previous = rows[index]!;
        const ms =
          ((row[side].checkSeconds - previous[side].checkSeconds) * 1000) / (row.tools - previous.tools);
        return `${previous.tools}->${row.tools}: ${ms.toFixed(0)} ms`;
      })
      .join(", ");
  console.log(`Check time per added tool: PAI ${marginal("pai")}; plain AI SDK ${marginal("sdk")}.`);
  const target = last.pai.checkSeconds / last.sdk.checkSeconds;
  console.log(
    `Target at ${last.tools} tools, PAI within 1.3x of the plain AI SDK: ${target <= 1.3 ? "met" : "missed"} (${target.toFixed(2)}x).`,
  );
}

async function main(): Promise<void> {
  checkDist("core");
  checkDist("client");
  // Inside the repository's node_modules so `@pai/*`, `ai` and `zod` resolve as an app's
  // imports would: through the workspace packages' `exports` to their built declarations.
  const cache = join(repo, "node_modules/.cache");
  mkdirSync(cache, { recursive: true });
  const root = mkdtempSync(join(cache, "pai-type-scale-"));
  const rows: Row[] = [];
  try {
    for (const tools of sizes) {
      const specs = toolSpecs(tools);
      const paiDir = join(root, `pai-${tools}`);
      const sdkDir = join(root, `sdk-${tools}`);
      writeSide(paiDir, paiAgentSource(specs), paiClientSource(specs, narrowing));
      writeSide(sdkDir, sdkAgentSource(specs), sdkClientSource(specs));
      const sdk = await measure(sdkDir);
      const pai = await measure(paiDir);
      console.log(
        `${tools} tools: PAI ${pai.checkSeconds.toFixed(2)} s, plain AI SDK ${sdk.checkSeconds.toFixed(2)} s`,
      );
      rows.push({ tools, pai, sdk });
    }
  } finally {
    if (keep) console.log(`generated projects kept in ${root}`);
    else rmSync(root, { recursive: true, force: true });
  }
  printTable(rows);
  printGrowth(rows);
}

await main();
