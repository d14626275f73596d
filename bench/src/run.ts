/**
 * `npm run bench`: PAI's cost against the bare AI SDK loop, measured in one process run
 * and reported as ratios. See bench/README.md for how to read the table.
 */
import { writeFileSync } from "node:fs";
import { createAgentRuntime, type Pai, type StorageV1, scopeFromIdentity } from "@pai/core";
import { internalsOf } from "@pai/core/testing";
import {
  convertToModelMessages,
  generateText,
  type ModelMessage,
  stepCountIs,
  tool,
  type UIMessage,
} from "ai";
import { z } from "zod";
import { countingStorage } from "./counting-storage.ts";
import { type BenchEngine, openMemory, openPglite, openPostgres } from "./engines.ts";
import { bareAddTools, benchAgent, turnModel } from "./fixtures.ts";
import { formatMs, type Measurement, measure } from "./harness.ts";
import { benchParked } from "./parked.ts";
import { benchThroughput } from "./throughput.ts";
import { startBareTrpcHost, startBenchHost } from "./trpc-host.ts";

const identity = { scopeKey: "bench", userKey: "bench-user" };
const results: Record<string, unknown> = { startedAt: new Date().toISOString(), node: process.version };
const lines: string[] = [];
const log = (line = "") => {
  lines.push(line);
  console.log(line);
};
const skipPostgres = process.env.PAI_BENCH_POSTGRES === "off";

function runtimeOn(
  storage: StorageV1,
  toolName: "add" | "approve",
  extra: { notifier?: BenchEngine["notifier"] } = {},
) {
  return createAgentRuntime({
    scope: scopeFromIdentity,
    agent: benchAgent,
    storage,
    model: turnModel(toolName),
    ...(extra.notifier ? { notifier: extra.notifier } : {}),
  });
}

async function twoStepRun(pai: Pai) {
  const thread = await pai.service.threads.create({ identity });
  await pai.service.threads.send({ identity, threadId: thread.threadId, message: { text: "1+2?" } });
  await pai.waitForIdle(thread.threadId);
  return thread.threadId;
}

async function suspendResume(pai: Pai) {
  const thread = await pai.service.threads.create({ identity });
  await pai.service.threads.send({ identity, threadId: thread.threadId, message: { text: "ship?" } });
  await pai.waitForIdle(thread.threadId);
  const snapshot = await pai.service.threads.get({ identity, threadId: thread.threadId });
  const action = snapshot.actions.find((candidate) => candidate.state === "pending");
  if (!action) throw new Error("bench: expected a pending action");
  await pai.service.actions.submit({
    identity,
    threadId: thread.threadId,
    actionId: action.actionId,
    payload: { approved: true },
  });
  await pai.waitForIdle(thread.threadId);
}

function row(measurement: Measurement, baseline?: Measurement) {
  const ratio = baseline ? (measurement.medianMs / baseline.medianMs).toFixed(2) : "1.00";
  return `| ${measurement.name.padEnd(34)} | ${formatMs(measurement.medianMs).padStart(8)} | ${formatMs(measurement.p95Ms).padStart(8)} | ${String(measurement.iterations).padStart(5)} | ${ratio.padStart(6)}x |`;
}

function tableHeader(title: string) {
  log();
  log(`### ${title}`);
  log("| scenario                           | median ms |   p95 ms | iters |  ratio |");
  log("|------------------------------------|----------:|---------:|------:|-------:|");
}

async function benchTwoStep(engines: BenchEngine[]) {
  const bareModel = turnModel("add");
  const bareTools = bareAddTools;
  const runtimes = engines.map((engine) => ({ engine, pai: runtimeOn(engine.storage, "add") }));
  const measured = await measure([
    {
      name: "bare AI SDK generateText (2 steps)",
      fn: () =>
        generateText({ model: bareModel, tools: bareTools, prompt: "1+2?", stopWhen: stepCountIs(2) }),
    },
    ...runtimes.map(({ engine, pai }) => ({
      name: `PAI two-step run (${engine.name})`,
      fn: () => twoStepRun(pai),
    })),
  ]);
  tableHeader("Per-step overhead: two-step run (tool call, then text)");
  const [bare, ...rest] = measured;
  log(row(bare!));
  for (const measurement of rest) log(row(measurement, bare));
  results.twoStep = measured.map((measurement) => ({
    ...measurement,
    ratio: measurement.medianMs / bare!.medianMs,
  }));
  for (const { pai } of runtimes) await pai.close();
}

async function benchSuspendResume(engines: BenchEngine[]) {
  const approvalModel = turnModel("approve");
  const approvalTools = {
    approve: tool({
      description: "Ask for approval.",
      inputSchema: z.object({ summary: z.string() }),
      execute: async () => ({ approved: true }),
    }),
  };
  const bareApproval = async () => {
    const first = await generateText({
      model: approvalModel,
      tools: approvalTools,
      toolApproval: { approve: "user-approval" },
      prompt: "ship?",
    });
    const request = first.content.find((part) => part.type === "tool-approval-request") as
      | { approvalId: string }
      | undefined;
    if (!request) throw new Error("bench: the AI SDK did not ask for approval");
    await generateText({
      model: approvalModel,
      tools: approvalTools,
      toolApproval: { approve: "user-approval" },
      messages: [
        { role: "user", content: "ship?" },
        ...first.response.messages,
        {
          role: "tool",
          content: [{ type: "tool-approval-response", approvalId: request.approvalId, approved: true }],
        },
      ],
      stopWhen: stepCountIs(2),
    });
  };
  const runtimes = engines
    .filter((engine) => engine.name !== "pglite")
    .map((engine) => ({ engine, pai: runtimeOn(engine.storage, "approve") }));
  const hosts = await Promise.all(
    runtimes.map(async (entry) => ({ ...entry, host: await startBenchHost(entry.pai, identity) })),
  );
  const overHttp = async (entry: (typeof hosts)[number]) => {
    const { client } = entry.host;
    const thread = await client.pai.threads.create.mutate({});
    await client.pai.threads.send.mutate({ threadId: thread.threadId, message: { text: "ship?" } });
    // The client learns the run parked (a watch would push it); waiting in-process keeps the HTTP cost isolated.
    await entry.pai.waitForIdle(thread.threadId);
    const snapshot = await client.pai.threads.get.query({ threadId: thread.threadId });
    const action = snapshot.pending[0];
    if (!action) throw new Error("bench: expected a pending action over HTTP");
    await client.pai.actions.submit.mutate({
      threadId: thread.threadId,
      actionId: action.ref.actionId,
      payload: { approved: true },
    });
    await entry.pai.waitForIdle(thread.threadId);
  };
  const bareTrpc = await startBareTrpcHost();
  // A fresh HTTP stack (undici, tRPC) runs about twice as slow for its first seconds while V8
  // optimizes it; a host that serves traffic is warm, so the HTTP flows run for 2 s first.
  for (const fn of [bareTrpc.flow, ...hosts.map((entry) => () => overHttp(entry))]) {
    const until = performance.now() + 2000;
    while (performance.now() < until) await fn();
  }
  const measured = await measure([
    { name: "bare AI SDK approval round trip", fn: bareApproval },
    ...runtimes.map(({ engine, pai }) => ({
      name: `PAI suspend->resume (${engine.name})`,
      fn: () => suspendResume(pai),
    })),
    { name: "bare tRPC HTTP, 4 no-op requests", fn: bareTrpc.flow },
    ...hosts.map((entry) => ({
      name: `PAI suspend->resume tRPC HTTP (${entry.engine.name})`,
      fn: () => overHttp(entry),
    })),
  ]);
  for (const { host } of hosts) await host.close();
  await bareTrpc.close();
  tableHeader("Suspend -> resume round trip (in process, service API)");
  const [bare, ...rest] = measured;
  log(row(bare!));
  for (const measurement of rest) log(row(measurement, bare));
  results.suspendResume = measured.map((measurement) => ({
    ...measurement,
    ratio: measurement.medianMs / bare!.medianMs,
  }));
  for (const { pai } of runtimes) await pai.close();
}

/** Seeds a thread with `count` messages by committing them directly (as a long history would be). */
async function seedThread(pai: Pai, count: number): Promise<string> {
  const thread = await pai.service.threads.create({ identity });
  const storage = internalsOf(pai).store.storage;
  let version = thread.version;
  const now = new Date().toISOString();
  const batch = 50;
  for (let start = 0; start < count; start += batch) {
    const events = [];
    for (let index = start; index < Math.min(count, start + batch); index++) {
      const role = index % 2 === 0 ? "user" : "assistant";
      const messageId = `seed-${index}`;
      events.push({
        type: "message-upserted" as const,
        message: {
          threadId: thread.threadId,
          messageId,
          position: index + 1,
          role: role as "user" | "assistant",
          message: {
            id: messageId,
            role: role as "user" | "assistant",
            parts: [{ type: "text" as const, text: `message ${index}: ${"lorem ipsum ".repeat(8)}` }],
          },
          runId: null,
          createdAt: now,
          updatedAt: now,
        },
      });
    }
    const result = await storage.commit({ threadId: thread.threadId, expectedVersion: version, events, now });
    if (!result.ok) throw new Error("bench: seeding conflicted");
    version = result.version;
  }
  return thread.threadId;
}

/** Storage calls of one two-step run, divided by its committed model steps (2). */
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

/**
 * The history `seedThread` writes, converted by the AI SDK exactly as PAI converts it, so the
 * bare baseline's model calls process the same prompt shape PAI's do.
 */
async function seededHistory(count: number): Promise<ModelMessage[]> {
  const messages: UIMessage[] = Array.from({ length: count }, (_, index) => ({
    id: `seed-${index}`,
    role: index % 2 === 0 ? ("user" as const) : ("assistant" as const),
    parts: [{ type: "text" as const, text: `message ${index}: ${"lorem ipsum ".repeat(8)}` }],
  }));
  messages.push({ id: "ask", role: "user", parts: [{ type: "text", text: "1+2?" }] });
  return convertToModelMessages(messages);
}

/**
 * One two-step turn on threads of N messages. Each measured turn runs on its own seeded thread
 * (a turn adds three messages, so reusing one thread would measure a growing thread), after one
 * unmeasured turn on it: the realistic case is the next turn of a conversation. The bare AI SDK
 * gets the same N-message history, since its own per-call cost also grows with the prompt.
 */
async function benchGrowth(engines: BenchEngine[]) {
  const sizes = [10, 100, 1000];
  const threadsPerSize = 30;
  const bareModel = turnModel("add");
  const bareTools = bareAddTools;
  const bare = new Map<number, Measurement>();
  for (const size of sizes) {
    const messages = await seededHistory(size);
    const [measurement] = await measure([
      {
        name: `bare ${size}`,
        fn: async () =>
          generateText({ model: bareModel, tools: bareTools, messages, stopWhen: stepCountIs(2) }),
      },
    ]);
    bare.set(size, measurement!);
  }
  log();
  log("### Growth: one two-step turn on a thread of N messages");
  log(
    "| engine   | messages | bare AI SDK ms | PAI median ms | PAI p95 ms | iters | PAI minus bare ms | vs 10 msgs | bytes written/turn | commits/turn | storage calls/turn |",
  );
  log(
    "|----------|---------:|---------------:|--------------:|-----------:|------:|------------------:|-----------:|-------------------:|-------------:|-------------------:|",
  );
  const growth: unknown[] = [];
  for (const engine of engines) {
    const counting = countingStorage(engine.storage);
    const pai = runtimeOn(counting.storage, "add");
    let ownAt10 = Number.NaN;
    for (const size of sizes) {
      const threads: string[] = [];
      for (let index = 0; index < threadsPerSize; index++) {
        const threadId = await seedThread(pai, size);
        await pai.service.threads.send({ identity, threadId, message: { text: "1+2?" } });
        await pai.waitForIdle(threadId);
        threads.push(threadId);
      }
      let next = 0;
      counting.reset();
      const [measurement] = await measure(
        [
          {
            name: `${engine.name} ${size}`,
            fn: async () => {
              const threadId = threads[next++]!;
              await pai.service.threads.send({ identity, threadId, message: { text: "1+2?" } });
              await pai.waitForIdle(threadId);
            },
          },
        ],
        // Exactly one measured turn per thread: no time budget, no warmup turns.
        { time: 0, iterations: threadsPerSize, warmupIterations: 0, warmupTime: 0 },
      );
      const turns = Math.max(1, next);
      const perTurn = {
        bytes: Math.round(counting.counters.bytesWritten / turns),
        commits: counting.counters.commits / turns,
        calls: counting.counters.calls / turns,
      };
      const bareMs = bare.get(size)!.medianMs;
      const own = measurement!.medianMs - bareMs;
      if (size === sizes[0]) ownAt10 = own;
      const change = `${own >= ownAt10 ? "+" : ""}${(((own - ownAt10) / ownAt10) * 100).toFixed(0)}%`;
      log(
        `| ${engine.name.padEnd(8)} | ${String(size).padStart(8)} | ${formatMs(bareMs).padStart(14)} | ${formatMs(measurement!.medianMs).padStart(13)} | ${formatMs(measurement!.p95Ms).padStart(10)} | ${String(measurement!.iterations).padStart(5)} | ${formatMs(own).padStart(17)} | ${change.padStart(10)} | ${String(perTurn.bytes).padStart(18)} | ${perTurn.commits.toFixed(1).padStart(12)} | ${perTurn.calls.toFixed(1).padStart(18)} |`,
      );
      growth.push({
        engine: engine.name,
        messages: size,
        bareMedianMs: bareMs,
        ...measurement,
        ownMs: own,
        ...perTurn,
      });
    }
    await pai.close();
  }
  results.growth = growth;
}

async function main() {
  const engines: BenchEngine[] = [await openMemory(), await openPglite()];
  if (!skipPostgres) {
    try {
      engines.push(await openPostgres());
    } catch (error) {
      if (process.env.CI === "true") throw error;
      log(`(Postgres unreachable at ${process.env.PAI_TEST_POSTGRES_URL ?? "127.0.0.1:5432"}: skipped)`);
    }
  }
  log(`# PAI benchmark (${new Date().toISOString()}, Node ${process.version})`);
  // PAI_BENCH_ONLY=parked runs just the parked-threads table (quick memory checks).
  const only = process.env.PAI_BENCH_ONLY;
  if (!only) {
    await benchTwoStep(engines);
    await benchSuspendResume(engines);
    await benchRoundTrips(engines);
    await benchGrowth(engines);
  }

  log();
  log("### Parked threads (each waiting on a pending action)");
  log(
    "| engine   | threads | heap delta MiB | of which the runtime's MiB | snapshots of parked threads held | idle-thread snapshots held |",
  );
  log(
    "|----------|--------:|---------------:|---------------------------:|---------------------------------:|---------------------------:|",
  );
  const parked: unknown[] = [];
  for (const engine of engines.filter((candidate) => candidate.name !== "pglite")) {
    const result = await benchParked(() => runtimeOn(engine.storage, "approve", engine), engine.name, 10_000);
    parked.push(result);
    log(
      `| ${result.engine.padEnd(8)} | ${String(result.threads).padStart(7)} | ${result.heapDeltaMiB.toFixed(1).padStart(14)} | ${result.runtimeHeldMiB.toFixed(1).padStart(26)} | ${String(result.cachedSnapshots).padStart(32)} | ${String(result.recentIdleSnapshots).padStart(26)} |`,
    );
  }
  results.parked = parked;

  const postgres = engines.find((engine) => engine.name === "postgres");
  if (postgres && !only) {
    log();
    log("### Throughput: concurrent two-step runs to completion");
    log("| engine   | concurrency | runs | runs/second |");
    log("|----------|------------:|-----:|------------:|");
    results.throughput = await benchThroughput(
      runtimeOn(postgres.storage, "add"),
      postgres.name,
      twoStepRun,
      log,
    );
  }

  for (const engine of engines) await engine.dispose();
  results.table = lines.join("\n");
  writeFileSync(new URL("../results.json", import.meta.url), `${JSON.stringify(results, null, 2)}\n`);
  log();
  log("wrote bench/results.json");
}

await main();
