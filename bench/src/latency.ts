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
import { startBareTrpcHost, startBenchHost } from "./trpc-host.ts";

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

export async function benchTwoStep(engines: BenchEngine[], floors: Floors) {
  const bareModel = turnModel("add");
  const memory = engines.find((engine) => engine.name === "memory");
  const runtimes = engines.map((engine) => ({ engine, pai: runtimeOn(engine.storage, "add") }));
  const watched = memory ? runtimeOn(memory.storage, "add") : undefined;
  const measured = await measure([
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
    ...runtimes.map(({ engine, pai }) => ({
      name: `PAI two-step run (${engine.name})`,
      fn: () => twoStepRun(pai),
    })),
    ...(watched
      ? [{ name: "PAI two-step run, live watcher (memory)", fn: () => watchedTwoStepRun(watched) }]
      : []),
  ]);
  const floorsMs: Array<number | undefined> = [undefined, undefined];
  for (const { engine } of runtimes) floorsMs.push(await floorOf(engine, floors, "add", twoStepRun));
  tableHeader("Per-step overhead: two-step run (tool call, then text)", ["vs gen", "vs stream"]);
  const [generate, stream] = measured;
  logRows(measured, [generate!, stream!], floorsMs);
  results.twoStep = measured.map((measurement, index) => ({
    ...measurement,
    vsGenerateText: measurement.medianMs / generate!.medianMs,
    vsStreamText: measurement.medianMs / stream!.medianMs,
    floorMs: floorsMs[index] ?? null,
  }));
  for (const { pai } of runtimes) await pai.close();
  await watched?.close();
}

export async function benchSuspendResume(engines: BenchEngine[], floors: Floors) {
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
  // Over HTTP only where a deployment would serve it from: memory (dev) and Postgres.
  const hosts = await Promise.all(
    runtimes
      .filter(({ engine }) => engine.name === "memory" || engine.name === "postgres")
      .map(async (entry) => ({ ...entry, host: await startBenchHost(entry.pai, identity) })),
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
  const floorsMs: Array<number | undefined> = [undefined];
  for (const { engine } of runtimes) floorsMs.push(await floorOf(engine, floors, "approve", suspendResume));
  const [bare] = measured;
  const bareHttp = measured[runtimes.length + 1]!;
  floorsMs.push(undefined);
  for (const { engine } of hosts) {
    const inProcess = floorsMs[1 + runtimes.findIndex((entry) => entry.engine === engine)];
    floorsMs.push(bareHttp.medianMs + (inProcess ?? 0));
  }
  tableHeader("Suspend -> resume round trip (in process, service API; then over tRPC HTTP)", ["vs SDK"]);
  logRows(measured, [bare!], floorsMs);
  results.suspendResume = measured.map((measurement, index) => ({
    ...measurement,
    ratio: measurement.medianMs / bare!.medianMs,
    floorMs: floorsMs[index] ?? null,
  }));
  for (const { pai } of runtimes) await pai.close();
}
