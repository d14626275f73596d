// The two latency tables: a two-step run and a suspend -> resume cycle, against the bare AI SDK
// doing the same work and against the database's own floor for the statements PAI sends.
import type { Pai } from "@pai/core";
import { generateText, stepCountIs, streamText, tool } from "ai";
import { z } from "zod";
import { countingStorage } from "./counting-storage.ts";
import type { BenchEngine } from "./engines.ts";
import { bareAddTools, turnModel } from "./fixtures.ts";
import type { SqlFloor } from "./floor.ts";
import { type Measurement, measure } from "./harness.ts";
import { log, results, row, tableHeader } from "./report.ts";
import { identity, runtimeOn, suspendResume, twoStepRun, watchedTwoStepRun } from "./scenarios.ts";
import { type BenchHost, startBareTrpcHost, startBenchHost } from "./trpc-host.ts";

type Floors = Map<string, SqlFloor>;

/**
 * What the database alone would take for the statements one `op` sends on `engine`: each commit
 * at the durable 1 KB insert's median, every other statement at `select 1`'s.
 */
async function floorOf(
  engine: BenchEngine,
  floors: Floors,
  toolName: "add" | "approve",
  op: (pai: Pai) => Promise<unknown>,
) {
  const floor = floors.get(engine.name);
  if (!floor || !engine.statements) return undefined;
  const counting = countingStorage(engine.storage);
  const pai = runtimeOn(counting.storage, toolName);
  await op(pai);
  counting.reset();
  const before = engine.statements.count;
  const runs = 10;
  for (let index = 0; index < runs; index++) await op(pai);
  const statements = (engine.statements.count - before) / runs;
  const commits = counting.counters.commits / runs;
  await pai.close();
  return commits * floor.insert1k.medianMs + (statements - commits) * floor.select1.medianMs;
}

function logRows(measured: Measurement[], baselines: Measurement[], floorsMs: Array<number | undefined>) {
  measured.forEach((measurement, index) => {
    log(row(measurement, baselines, floorsMs[index]));
  });
}

/**
 * The in-process rows of both latency tables (the SDK baselines, memory, memory with a watcher,
 * memory over HTTP) are measured first in the run, warm-up included, before any SQL adapter's
 * code has run in the process. A deployment runs one storage per process; measured after four
 * SQL adapters, the memory rows paid for V8 inline caches that had seen every adapter's storage
 * objects and row shapes (a watched run measured 0.287 ms that way against 0.228 ms in its own
 * pass, on the same commit).
 */
export type InProcessRows = {
  twoStep: Measurement[];
  suspendResume: Measurement[];
  /**
   * Closes the in-process HTTP hosts. They stay open until the Postgres host is done: a new host
   * may get a closed one's port, and fetch's pool then reuses a socket the old server reset.
   */
  close(): Promise<void>;
};

export async function measureInProcessRows(memory: BenchEngine | undefined): Promise<InProcessRows> {
  const bareModel = turnModel("add");
  const plain = memory ? runtimeOn(memory.storage, "add") : undefined;
  const watched = memory ? runtimeOn(memory.storage, "add") : undefined;
  const twoStep = await measure(
    [
      {
        name: "bare AI SDK generateText (2 steps)",
        fn: () =>
          generateText({ model: bareModel, tools: bareAddTools, prompt: "1+2?", stopWhen: stepCountIs(2) }),
      },
      {
        name: "bare AI SDK streamText (2 steps)",
        fn: async () => {
          await streamText({
            model: bareModel,
            tools: bareAddTools,
            prompt: "1+2?",
            stopWhen: stepCountIs(2),
          }).consumeStream();
        },
      },
      ...(plain ? [{ name: "PAI two-step run (memory)", fn: () => twoStepRun(plain) }] : []),
      ...(watched
        ? [{ name: "PAI two-step run, live watcher (memory)", fn: () => watchedTwoStepRun(watched) }]
        : []),
    ],
    { interleave: true },
  );
  await plain?.close();
  await watched?.close();
  const approving = memory ? runtimeOn(memory.storage, "approve") : undefined;
  const host = approving ? await startBenchHost(approving, identity) : undefined;
  const bareTrpc = await startBareTrpcHost();
  await warmHttp([bareTrpc.flow, ...(host && approving ? [() => overHttp(approving, host)] : [])]);
  const roundTrips = await measure(
    [
      { name: "bare AI SDK approval round trip", fn: bareApproval },
      ...(approving ? [{ name: "PAI suspend->resume (memory)", fn: () => suspendResume(approving) }] : []),
      { name: "bare tRPC HTTP, 4 no-op requests", fn: bareTrpc.flow },
      ...(host && approving
        ? [{ name: "PAI suspend->resume tRPC HTTP (memory)", fn: () => overHttp(approving, host) }]
        : []),
    ],
    { interleave: true },
  );
  return {
    twoStep,
    suspendResume: roundTrips,
    async close() {
      await host?.close();
      await bareTrpc.close();
      await approving?.close();
    },
  };
}

export async function benchTwoStep(engines: BenchEngine[], floors: Floors, early: InProcessRows) {
  const sqlRuntimes = engines
    .filter((engine) => engine.sql)
    .map((engine) => ({ engine, pai: runtimeOn(engine.storage, "add") }));
  const sql = await measure(
    sqlRuntimes.map(({ engine, pai }) => ({
      name: `PAI two-step run (${engine.name})`,
      fn: () => twoStepRun(pai),
    })),
  );
  const measured = [...early.twoStep, ...sql];
  const floorsMs: Array<number | undefined> = early.twoStep.map(() => undefined);
  for (const { engine } of sqlRuntimes) floorsMs.push(await floorOf(engine, floors, "add", twoStepRun));
  tableHeader("Per-step overhead: two-step run (tool call, then text)", ["vs gen", "vs stream"]);
  const [generate, stream] = measured;
  logRows(measured, [generate!, stream!], floorsMs);
  results.twoStep = measured.map((measurement, index) => ({
    ...measurement,
    vsGenerateText: measurement.medianMs / generate!.medianMs,
    vsStreamText: measurement.medianMs / stream!.medianMs,
    floorMs: floorsMs[index] ?? null,
  }));
  for (const { pai } of sqlRuntimes) await pai.close();
}

const approvalModel = turnModel("approve");
const approvalTools = {
  approve: tool({
    description: "Ask for approval.",
    inputSchema: z.object({ summary: z.string() }),
    execute: async () => ({ approved: true }),
  }),
};

/** The AI SDK's own approval round trip: a call that asks, then the answer and the final step. */
async function bareApproval() {
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
}

/** Suspend -> resume as a client does it over tRPC HTTP (four requests). */
async function overHttp(pai: Pai, host: BenchHost) {
  const { client } = host;
  const thread = await client.pai.threads.create.mutate({});
  await client.pai.threads.send.mutate({ threadId: thread.threadId, message: { text: "ship?" } });
  // The client learns the run parked (a watch would push it); waiting in-process keeps the HTTP cost isolated.
  await pai.waitForIdle(thread.threadId);
  const snapshot = await client.pai.threads.get.query({ threadId: thread.threadId });
  const action = snapshot.pending[0];
  if (!action) throw new Error("bench: expected a pending action over HTTP");
  await client.pai.actions.submit.mutate({
    threadId: thread.threadId,
    actionId: action.ref.actionId,
    payload: { approved: true },
  });
  await pai.waitForIdle(thread.threadId);
}

/**
 * A fresh HTTP stack (undici, tRPC) runs about twice as slow for its first seconds while V8
 * optimizes it; a host that serves traffic is warm, so each HTTP flow runs for 2 s first.
 */
async function warmHttp(flows: Array<() => Promise<unknown>>) {
  for (const fn of flows) {
    const until = performance.now() + 2000;
    while (performance.now() < until) await fn();
  }
}

export async function benchSuspendResume(engines: BenchEngine[], floors: Floors, early: InProcessRows) {
  const runtimes = engines
    .filter((engine) => engine.sql && engine.name !== "pglite")
    .map((engine) => ({ engine, pai: runtimeOn(engine.storage, "approve") }));
  // Over HTTP only where a deployment would serve it from: memory (dev, measured with the
  // in-process rows) and Postgres.
  const hosts = await Promise.all(
    runtimes
      .filter(({ engine }) => engine.name === "postgres")
      .map(async (entry) => ({ ...entry, host: await startBenchHost(entry.pai, identity) })),
  );
  await warmHttp(hosts.map((entry) => () => overHttp(entry.pai, entry.host)));
  const sql = await measure([
    ...runtimes.map(({ engine, pai }) => ({
      name: `PAI suspend->resume (${engine.name})`,
      fn: () => suspendResume(pai),
    })),
    ...hosts.map((entry) => ({
      name: `PAI suspend->resume tRPC HTTP (${entry.engine.name})`,
      fn: () => overHttp(entry.pai, entry.host),
    })),
  ]);
  for (const { host } of hosts) await host.close();
  await early.close();
  const byName = (name: string) => [...early.suspendResume, ...sql].find((entry) => entry.name === name);
  const bare = byName("bare AI SDK approval round trip")!;
  const bareHttp = byName("bare tRPC HTTP, 4 no-op requests")!;
  const inProcessFloor = new Map<string, number | undefined>();
  for (const { engine } of runtimes)
    inProcessFloor.set(engine.name, await floorOf(engine, floors, "approve", suspendResume));
  // Printed in process first, then over HTTP, each with its floor where the engine has one.
  const rows: Array<{ measurement: Measurement; floorMs: number | undefined }> = [];
  const add = (name: string, floorMs?: number) => {
    const measurement = byName(name);
    if (measurement) rows.push({ measurement, floorMs });
  };
  add("bare AI SDK approval round trip");
  add("PAI suspend->resume (memory)");
  for (const { engine } of runtimes)
    add(`PAI suspend->resume (${engine.name})`, inProcessFloor.get(engine.name));
  add("bare tRPC HTTP, 4 no-op requests");
  add("PAI suspend->resume tRPC HTTP (memory)", bareHttp.medianMs);
  for (const { engine } of hosts) {
    add(
      `PAI suspend->resume tRPC HTTP (${engine.name})`,
      bareHttp.medianMs + (inProcessFloor.get(engine.name) ?? 0),
    );
  }
  tableHeader("Suspend -> resume round trip (in process, service API; then over tRPC HTTP)", ["vs SDK"]);
  logRows(
    rows.map((entry) => entry.measurement),
    [bare],
    rows.map((entry) => entry.floorMs),
  );
  results.suspendResume = rows.map(({ measurement, floorMs }) => ({
    ...measurement,
    ratio: measurement.medianMs / bare.medianMs,
    floorMs: floorMs ?? null,
  }));
  for (const { pai } of runtimes) await pai.close();
}
