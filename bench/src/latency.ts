// The two latency tables: a two-step run and a suspend -> resume cycle, against the bare AI SDK
// doing the same work and against the database's own floor for the statements PAI sends.
import type { Pai } from "@pai/core";
import { generateText, stepCountIs, streamText } from "ai";
import { sql } from "kysely";
import { countingStorage } from "./counting-storage.ts";
import type { BenchEngine } from "./engines.ts";
import { bareAddTools, turnModel } from "./fixtures.ts";
import { insertOne, openFloorTable } from "./floor.ts";
import { formatMs, type Measurement, measure } from "./harness.ts";
import { bareApproval, bareHttpName, overHttp, THEN_SEND, warmHttp } from "./http-flow.ts";
import { log, results, row, tableHeader } from "./report.ts";
import {
  identity,
  runtimeOn,
  suspendResume,
  suspendResumeCreateThenSend,
  twoStepRun,
  watchedTwoStepRun,
} from "./scenarios.ts";
import { type FlowStart, startBareTrpcHost, startBenchHost, startSequenceFloorHost } from "./trpc-host.ts";

/**
 * What the database alone takes for the statements one `op` sends on `engine`, as a task to
 * measure beside PAI's: each commit a durable 1 KB insert, every other statement a `select 1`,
 * one after another. Measured in the same rounds as the PAI rows, the floor sees the same server
 * state; a floor read minutes earlier (the floor table) had the server in another phase as often
 * as not (0.20 against 0.52 ms for the same insert, twelfth pass).
 */
async function floorTask(
  engine: BenchEngine,
  toolName: "add" | "approve",
  op: (pai: Pai) => Promise<unknown>,
  label = "",
) {
  if (!engine.sql || !engine.statements) return undefined;
  const counting = countingStorage(engine.storage);
  const pai = runtimeOn(counting.storage, toolName);
  await op(pai);
  counting.reset();
  const before = engine.statements.count;
  const runs = 10;
  for (let index = 0; index < runs; index++) await op(pai);
  const statements = Math.round((engine.statements.count - before) / runs);
  const commits = Math.round(counting.counters.commits / runs);
  await pai.close();
  const { db } = engine.sql;
  const { table, drop } = await openFloorTable(db, "flow_floor");
  return {
    name: `floor${label}: ${commits} durable 1 KB inserts + ${statements - commits} select 1 (${engine.name})`,
    fn: async () => {
      for (let index = 0; index < commits; index++) await insertOne(db, table);
      for (let index = commits; index < statements; index++) await sql`select 1`.execute(db);
    },
    drop,
  };
}

type FloorTask = NonNullable<Awaited<ReturnType<typeof floorTask>>>;

const optional = <T>(value: T | undefined): T[] => (value === undefined ? [] : [value]);

/**
 * Each engine's tasks in turns with each other, one engine after another. Not all engines in one
 * set of turns: a server's background work (InnoDB flushing its dirty pages, the disk taking
 * SQLite's fsyncs) lands in the next engine's turn: Postgres' suspend -> resume read 5.70 ms in
 * turns with MariaDB's and SQLite's rows, and 4.77 ms in its own turns in the next run.
 */
async function inTurnsPerEngine(
  groups: Array<Array<{ name: string; fn: () => Promise<unknown> }>>,
): Promise<Measurement[]> {
  const measured: Measurement[] = [];
  for (const tasks of groups) measured.push(...(await measure(tasks, { interleave: true })));
  return measured;
}

/** The floor tasks of `engines` for `op`, by engine name. */
async function floorTasks(
  engines: BenchEngine[],
  toolName: "add" | "approve",
  op: (pai: Pai) => Promise<unknown>,
): Promise<Map<string, FloorTask>> {
  const tasks = new Map<string, FloorTask>();
  for (const engine of engines) {
    const task = await floorTask(engine, toolName, op);
    if (task) tasks.set(engine.name, task);
  }
  return tasks;
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
  const bareFlow = () => bareTrpc.flow("waiting");
  await warmHttp([bareFlow, ...(host && approving ? [() => overHttp(approving, host)] : [])]);
  const roundTrips = await measure(
    [
      { name: "bare AI SDK approval round trip", fn: bareApproval },
      ...(approving ? [{ name: "PAI suspend->resume (memory)", fn: () => suspendResume(approving) }] : []),
      { name: bareHttpName("waiting"), fn: bareFlow },
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

/**
 * The SQL rows of the two-step table, taken in turns (`interleave`) with each engine's floor
 * task, so a row and its floor see the same server; the floor task's median is the row's floor.
 */
export async function benchTwoStep(engines: BenchEngine[], early: InProcessRows) {
  const sqlRuntimes = engines
    .filter((engine) => engine.sql)
    .map((engine) => ({ engine, pai: runtimeOn(engine.storage, "add") }));
  const floors = await floorTasks(
    sqlRuntimes.map(({ engine }) => engine),
    "add",
    twoStepRun,
  );
  const measuredWithFloors = await inTurnsPerEngine(
    sqlRuntimes.map(({ engine, pai }) => [
      { name: `PAI two-step run (${engine.name})`, fn: () => twoStepRun(pai) },
      ...optional(floors.get(engine.name)),
    ]),
  );
  for (const floor of floors.values()) await floor.drop();
  const floorMs = (engineName: string) =>
    measuredWithFloors.find((entry) => entry.name === floors.get(engineName)?.name)?.medianMs;
  const measured = [
    ...early.twoStep,
    ...sqlRuntimes.map(
      ({ engine }) => measuredWithFloors.find((entry) => entry.name === `PAI two-step run (${engine.name})`)!,
    ),
  ];
  const floorsMs: Array<number | undefined> = [
    ...early.twoStep.map(() => undefined),
    ...sqlRuntimes.map(({ engine }) => floorMs(engine.name)),
  ];
  tableHeader("Per-step overhead: two-step run (tool call, then text)", ["vs gen", "vs stream"]);
  const [generate, stream] = measured;
  logRows(measured, [generate!, stream!], floorsMs);
  logFloorTasks(floors.values(), measuredWithFloors);
  results.twoStep = measured.map((measurement, index) => ({
    ...measurement,
    vsGenerateText: measurement.medianMs / generate!.medianMs,
    vsStreamText: measurement.medianMs / stream!.medianMs,
    floorMs: floorsMs[index] ?? null,
  }));
  for (const { pai } of sqlRuntimes) await pai.close();
}

/** Prints what each floor task sent and took, under the table whose floor column it gives. */
function logFloorTasks(floors: Iterable<FloorTask>, measured: Measurement[]) {
  log();
  for (const floor of floors) {
    const reading = measured.find((entry) => entry.name === floor.name);
    if (reading) log(`- ${floor.name}, in the same rounds: ${formatMs(reading.medianMs)} ms`);
  }
}

/**
 * The SQL rows of the suspend -> resume table, taken in turns with their floor tasks and with a
 * bare tRPC host of their own: the Postgres HTTP row's floor is those bare requests plus its
 * in-process floor, both read in the same rounds as the row. On Postgres the flow that creates
 * the thread and then sends to it is measured beside, with floors of its own.
 */
export async function benchSuspendResume(engines: BenchEngine[], early: InProcessRows) {
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
  const floors = await floorTasks(
    runtimes.map(({ engine }) => engine),
    "approve",
    suspendResume,
  );
  const thenSendFloors = new Map<string, FloorTask>();
  for (const { engine } of hosts) {
    const task = await floorTask(engine, "approve", suspendResumeCreateThenSend, THEN_SEND);
    if (task) thenSendFloors.set(engine.name, task);
  }
  const bareTrpc = hosts.length > 0 ? await startBareTrpcHost() : undefined;
  const starts: FlowStart[] = ["waiting", "create-then-send"];
  const bareBeside = (start: FlowStart) => `${bareHttpName(start)}, same rounds`;
  const sequences = await Promise.all(
    hosts.map(async ({ engine }) => {
      const { db } = engine.sql!;
      const { table, drop } = await openFloorTable(db, "sequence");
      return { engine, host: await startSequenceFloorHost(db, table), drop };
    }),
  );
  const sequenceName = (engineName: string, start: FlowStart) =>
    `bare tRPC HTTP doing the flow's statements in its order${start === "create-then-send" ? THEN_SEND : ""} (${engineName})`;
  const httpName = (engineName: string, start: FlowStart) =>
    `PAI suspend->resume tRPC HTTP${start === "create-then-send" ? THEN_SEND : ""} (${engineName})`;
  await warmHttp([
    ...hosts.flatMap((entry) => starts.map((start) => () => overHttp(entry.pai, entry.host, start))),
    ...(bareTrpc ? starts.map((start) => () => bareTrpc.flow(start)) : []),
    ...sequences.flatMap((entry) => starts.map((start) => () => entry.host.flow(start))),
  ]);
  const sql = await inTurnsPerEngine(
    runtimes.map(({ engine, pai }) => {
      const host = hosts.find((entry) => entry.engine === engine);
      const sequence = sequences.find((entry) => entry.engine === engine);
      return [
        { name: `PAI suspend->resume (${engine.name})`, fn: () => suspendResume(pai) },
        ...optional(floors.get(engine.name)),
        ...(host
          ? [
              {
                name: `PAI suspend->resume${THEN_SEND} (${engine.name})`,
                fn: () => suspendResumeCreateThenSend(pai),
              },
              ...optional(thenSendFloors.get(engine.name)),
              ...starts.flatMap((start) => [
                { name: httpName(engine.name, start), fn: () => overHttp(pai, host.host, start) },
                ...(bareTrpc ? [{ name: bareBeside(start), fn: () => bareTrpc.flow(start) }] : []),
                ...(sequence
                  ? [{ name: sequenceName(engine.name, start), fn: () => sequence.host.flow(start) }]
                  : []),
              ]),
            ]
          : []),
      ];
    }),
  );
  for (const { host } of hosts) await host.close();
  await bareTrpc?.close();
  for (const sequence of sequences) {
    await sequence.host.close();
    await sequence.drop();
  }
  for (const floor of [...floors.values(), ...thenSendFloors.values()]) await floor.drop();
  await early.close();
  const byName = (name: string) => [...early.suspendResume, ...sql].find((entry) => entry.name === name);
  const bare = byName("bare AI SDK approval round trip")!;
  const bareHttp = byName(bareHttpName("waiting"))!;
  const floorMs = (engineName: string, start: FlowStart = "waiting") => {
    const floor = (start === "waiting" ? floors : thenSendFloors).get(engineName);
    return floor ? byName(floor.name)?.medianMs : undefined;
  };
  // Printed in process first, then over HTTP, each with its floor where the engine has one.
  const rows: Array<{ measurement: Measurement; floorMs: number | undefined }> = [];
  const add = (name: string, floorMs?: number) => {
    const measurement = byName(name);
    if (measurement) rows.push({ measurement, floorMs });
  };
  add("bare AI SDK approval round trip");
  add("PAI suspend->resume (memory)");
  for (const { engine } of runtimes) add(`PAI suspend->resume (${engine.name})`, floorMs(engine.name));
  for (const { engine } of hosts) {
    add(`PAI suspend->resume${THEN_SEND} (${engine.name})`, floorMs(engine.name, "create-then-send"));
  }
  add(bareHttpName("waiting"));
  add("PAI suspend->resume tRPC HTTP (memory)", bareHttp.medianMs);
  for (const start of starts) {
    add(bareBeside(start));
    const bareBesideMs = byName(bareBeside(start))?.medianMs;
    for (const { engine } of hosts) {
      const inProcess = floorMs(engine.name, start);
      add(
        httpName(engine.name, start),
        bareBesideMs === undefined || inProcess === undefined ? undefined : bareBesideMs + inProcess,
      );
    }
  }
  tableHeader("Suspend -> resume round trip (in process, service API; then over tRPC HTTP)", ["vs SDK"]);
  logRows(
    rows.map((entry) => entry.measurement),
    [bare],
    rows.map((entry) => entry.floorMs),
  );
  logFloorTasks([...floors.values(), ...thenSendFloors.values()], sql);
  // Beside the floor the ratio uses: the same statements sent where and when the flow sends them.
  const sequenceReadings = hosts.flatMap(({ engine }) =>
    starts.flatMap((start) => {
      const reading = byName(sequenceName(engine.name, start));
      const pai = byName(httpName(engine.name, start));
      return reading && pai ? [{ engine: engine.name, start, reading, pai }] : [];
    }),
  );
  for (const { reading, pai } of sequenceReadings) {
    log(
      `- ${reading.name}, same rounds: ${formatMs(reading.medianMs)} ms (p95 ${formatMs(reading.p95Ms)}); the PAI row is ${(pai.medianMs / reading.medianMs).toFixed(2)}x that`,
    );
  }
  log(
    '- the flow creates the thread with its first message and both calls wait for their run to stop (waitMs): two requests, six commits, no read; the rows marked "create then send" create, send, read and submit, as passes before the nineteenth did',
  );
  results.suspendResume = rows.map(({ measurement, floorMs }) => ({
    ...measurement,
    ratio: measurement.medianMs / bare.medianMs,
    floorMs: floorMs ?? null,
  }));
  results.httpSequenceFloor = sequenceReadings.map(({ engine, start, reading, pai }) => ({
    engine,
    start,
    ...reading,
    paiRatio: pai.medianMs / reading.medianMs,
  }));
  for (const { pai } of runtimes) await pai.close();
}
