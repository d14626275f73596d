/**
 * The dispatch cluster scenario: API processes that only send runs as jobs, worker processes
 * that drive them and are SIGKILLed at random moments, all on one Postgres storage; then checks
 * from storage and from what every process printed that every run finished once, that no run
 * was driven by two processes at once, and that no committed output was lost or doubled.
 *
 * Rounds: each round a warm standby worker is ready, the API processes send the round's share
 * of the runs spread over 1–2 s, then a random worker in the middle of a model step or tool
 * call (any worker when none is) is SIGKILLed and the standby starts working in its place.
 *
 * Checks (each failure is listed; the report lines print either way):
 * - every run sent is `completed`, with 2 committed steps; its thread holds the user message,
 *   the first step's text, one `record` tool part and the final text, each exactly once;
 * - the tool part has an output whose `by` is the one execution recorded in the marker table,
 *   or is the interrupted error with at most one execution (never re-run); no execution belongs
 *   to a tool call that is not in the thread (nothing ran for an uncommitted step);
 * - every commit a process saw acknowledged is in the thread's event log with the same events,
 *   no version was acknowledged twice with different events, and versions run 1..N;
 * - API processes made no model call and worked no job; standbys did nothing before started;
 * - no two processes were in a step or tool call of the same run at once (a killed process's
 *   open spans end at its kill), unless the earlier one's lease had expired when the later one
 *   took it (a stall longer than the lease: the fences keep its late writes out);
 * - no process but the killed ones died, every other one stopped cleanly; no job was dropped.
 */
import { createHash } from "node:crypto";
import { writeFileSync } from "node:fs";
import { INTERRUPTED_TEXT, type ThreadSnapshot } from "@pai/core";
import { kyselyStorage, migrateToLatest, tableNames } from "@pai/storage-kysely";
import { Kysely, PostgresDialect, sql } from "kysely";
import pg from "pg";
import {
  activity,
  checkThread,
  describeStuckRuns,
  findOverlaps,
  type Interval,
  toolParts,
} from "./cluster-checks.ts";
import { ClusterProcess, type ProcessEvent } from "./cluster-process.ts";
import { cleanup, installBossSchema, postgresUrl, redisUrl } from "./cluster-services.ts";
import {
  canonicalJson,
  createMarkerTable,
  type MarkerRow,
  readMarkers,
  scopeKeys,
} from "./fixtures/cluster-agent.ts";
import type { ClusterConfig, Engine } from "./fixtures/cluster-runtime.ts";

export type ClusterOptions = {
  engine: Engine;
  runs: number;
  apiProcesses: number;
  workers: number;
  /** Workers SIGKILLed: one per round, while the round's share of the runs is being sent. */
  minKills: number;
  /** Length of a round (uniformly random in the range), ms. */
  killEveryMs: readonly [number, number];
  /** Warm worker processes kept ready to replace a killed worker. */
  standbys: number;
  /** After the kill phase, how long every run has to complete, ms. */
  completeWithinMs: number;
  leaseMs: number;
  worker: ClusterConfig["worker"];
  modelDelayMs: readonly [number, number];
  toolDelayMs: readonly [number, number];
};

export type ClusterOutcome = { failures: string[]; report: string[] };

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const between = ([min, max]: readonly [number, number]) => min + Math.random() * (max - min);
const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;
const suffix = () => Math.random().toString(36).slice(2, 8);
const hash = (events: unknown) => createHash("sha1").update(canonicalJson(events)).digest("hex");
const percentile = (values: number[], p: number) => {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))]!;
};

/** Runs the scenario once, cleaning up whatever it created. */
export async function runCluster(options: ClusterOptions): Promise<ClusterOutcome> {
  const failures: string[] = [];
  const report: string[] = [];
  const check = (ok: boolean, message: string) => {
    if (!ok) failures.push(message);
  };
  const started = Date.now();
  const at = () => seconds(Date.now() - started);
  const id = suffix();
  const prefix = `pai_dc_${options.engine}_${id}_`;
  const bossSchema = `pai_dc_boss_${id}`;
  const queue = `pai-dc-${options.engine}-${id}`;
  const bullPrefix = `pai-dc-${id}`;
  const pool = new pg.Pool({ connectionString: postgresUrl, max: 4 });
  const db = new Kysely<any>({ dialect: new PostgresDialect({ pool }) });
  const storage = kyselyStorage({ db, tablePrefix: prefix });
  const tables = tableNames(prefix);
  const processes: ClusterProcess[] = [];
  let instances = 0;

  const spawn = (role: "api" | "worker", standby = false) => {
    const config: ClusterConfig = {
      role,
      standby,
      instanceId: `${role}${++instances}`,
      engine: options.engine,
      postgresUrl,
      redisUrl,
      prefix,
      queue,
      bossSchema,
      bullPrefix,
      leaseMs: options.leaseMs,
      modelDelayMs: options.modelDelayMs,
      toolDelayMs: options.toolDelayMs,
      worker: options.worker,
    };
    const child = new ClusterProcess(config);
    processes.push(child);
    return child;
  };
  const workers = () => processes.filter((child) => child.role === "worker");

  try {
    // ---------------------------------------------------------------- setup
    await migrateToLatest(db, { tablePrefix: prefix });
    await createMarkerTable(db, prefix);
    if (options.engine === "pgboss") await installBossSchema(bossSchema);
    const apis = Array.from({ length: options.apiProcesses }, () => spawn("api"));
    for (let index = 0; index < options.workers; index++) spawn("worker");
    // Warm standbys replace killed workers at once (a process may take seconds to start on a busy
    // machine, and the kills should not outpace the replacements).
    const standbys: ClusterProcess[] = [];
    const topUpStandbys = () => {
      while (standbys.filter((child) => child.alive).length < options.standbys) {
        standbys.push(spawn("worker", true));
      }
    };
    topUpStandbys();
    await Promise.all(processes.map((child) => child.ready()));
    await Promise.all(
      workers()
        .filter((child) => !child.config.standby)
        .map((child) => child.waitFor((event) => event.kind === "working", 30_000, "working line")),
    );
    const readyAt = Date.now();
    report.push(`processes ready after ${seconds(readyAt - started)}`);

    // ---------------------------------------------------------------- rounds: send a batch, kill a worker
    // Sending is paced by the kills (not by the clock), so every kill lands while runs are in
    // flight however fast or slow this machine is: each round the API processes send their
    // share of a batch spread over the round, then a working worker is SIGKILLed and a warm
    // standby takes its place.
    const planned = Array.from({ length: options.runs }, (_, index) => ({
      threadId: `t${id}-${String(index).padStart(4, "0")}`,
      scopeKey: scopeKeys[index % scopeKeys.length]!,
      token: `tok${id}-${index}`,
    }));
    const rounds = options.minKills;
    const kills: Array<{ instanceId: string; at: number }> = [];
    const killPhaseStart = Date.now();
    let waitedForStandbyMs = 0;
    const assigned = new Map<ClusterProcess, number>();
    const readyStandby = () =>
      standbys.find((child) => child.alive && child.readyAt !== undefined && !child.promoted);
    for (let round = 0; round < rounds; round++) {
      const batch = planned.slice(
        Math.floor((round * planned.length) / rounds),
        Math.floor(((round + 1) * planned.length) / rounds),
      );
      // The replacement is ready before the round starts, so the kill ends the round on time.
      const waitFrom = Date.now();
      let standby = readyStandby();
      while (!standby) {
        if (Date.now() - waitFrom > 120_000) throw new Error("no standby worker became ready within 120 s");
        await sleep(50);
        standby = readyStandby();
      }
      waitedForStandbyMs += Date.now() - waitFrom;
      const roundMs = between(options.killEveryMs);
      apis.forEach((api, index) => {
        const share = batch.filter((_, position) => position % apis.length === index);
        if (share.length === 0) return;
        api.send({ op: "start", runs: share, intervalMs: roundMs / share.length });
        assigned.set(api, (assigned.get(api) ?? 0) + share.length);
      });
      await sleep(roundMs);
      // A random worker, one in the middle of a step or tool call when there is one.
      const working = workers().filter((child) => child.alive && child.workingAt !== undefined);
      const busy = working.filter((child) => child.busy);
      const pool = busy.length > 0 ? busy : working;
      const victim = pool[Math.floor(Math.random() * pool.length)];
      if (victim) {
        await victim.kill();
        kills.push({ instanceId: victim.instanceId, at: victim.killedAt! });
      }
      standby.promoted = true;
      standby.send({ op: "start" });
      standbys.splice(standbys.indexOf(standby), 1);
      topUpStandbys();
    }
    const killPhaseEnd = Date.now();
    const batchesDone = (api: ClusterProcess) =>
      api.events
        .filter((event) => event.kind === "sending-done")
        .reduce((sum, event) => sum + event.count, 0);
    for (const api of apis) {
      const expected = assigned.get(api) ?? 0;
      await api.waitFor(() => batchesDone(api) >= expected, 120_000, "the end of its sending");
    }
    report.push(
      `kill phase: ${kills.length} workers SIGKILLed over ${seconds(killPhaseEnd - killPhaseStart)} while ${planned.length} runs were sent, each replaced at once by a warm standby (waited ${seconds(waitedForStandbyMs)} in all for standbys to start)`,
    );

    // ---------------------------------------------------------------- wait for every run to end
    const sentRuns = apis.flatMap((api) => api.events.filter((event) => event.kind === "sent"));
    const sendErrors = apis.flatMap((api) => api.events.filter((event) => event.kind === "send-error"));
    check(sentRuns.length === options.runs, `${sentRuns.length} of ${options.runs} runs were sent`);
    check(sendErrors.length === 0, `send errors: ${JSON.stringify(sendErrors.slice(0, 5))}`);
    const deadline = Date.now() + options.completeWithinMs;
    let statuses: Record<string, number> = {};
    for (;;) {
      const rows = await sql<{
        status: string;
        count: string;
      }>`select status, count(*) as count from ${sql.table(tables.runs)} group by status`.execute(db);
      statuses = Object.fromEntries(rows.rows.map((row) => [row.status, Number(row.count)]));
      const unfinished = Object.entries(statuses)
        .filter(([status]) => !["completed", "failed", "cancelled"].includes(status))
        .reduce((sum, [, count]) => sum + count, 0);
      if (unfinished === 0 && (statuses.completed ?? 0) + (statuses.failed ?? 0) >= sentRuns.length) break;
      if (Date.now() > deadline) {
        failures.push(
          `runs still unfinished ${seconds(options.completeWithinMs)} after the last kill: ${JSON.stringify(statuses)}`,
        );
        failures.push(...(await describeStuckRuns(db, tables.runs, processes)));
        break;
      }
      await sleep(250);
    }
    const completedAt = Date.now();
    report.push(
      `all runs ended ${seconds(completedAt - killPhaseEnd)} after the last kill, ${seconds(
        completedAt - readyAt,
      )} after the first send: ${JSON.stringify(statuses)}`,
    );

    // ---------------------------------------------------------------- reports and graceful stop
    const live = processes.filter((child) => child.alive);
    for (const child of live) child.send({ op: "report" });
    const reports = new Map<string, ProcessEvent>();
    await Promise.all(
      live.map(async (child) => {
        try {
          reports.set(
            child.instanceId,
            await child.waitFor((event) => event.kind === "report", 10_000, "report"),
          );
        } catch (error) {
          failures.push(String(error));
        }
      }),
    );
    const stopped = await Promise.all(live.map((child) => child.stop()));
    live.forEach((child, index) => {
      check(
        stopped[index]!,
        `${child.instanceId} did not stop cleanly (${JSON.stringify(child.exit)}): ${child.stderr}`,
      );
    });
    for (const child of processes.filter((item) => item.killedAt === undefined && !live.includes(item))) {
      failures.push(`${child.instanceId} died on its own (${JSON.stringify(child.exit)}): ${child.stderr}`);
    }

    // ---------------------------------------------------------------- checks: API processes never drive
    for (const api of apis) {
      check(
        reports.get(api.instanceId)?.modelCalls === 0,
        `${api.instanceId} (API) made ${reports.get(api.instanceId)?.modelCalls} model calls`,
      );
      const driving = api.events.filter(
        (event) =>
          event.kind === "model-call" ||
          event.kind === "job-start" ||
          (event.kind === "rt" && ["step-start", "model-start", "tool-start"].includes(event.event)),
      );
      check(
        driving.length === 0,
        `${api.instanceId} (API) drove runs: ${JSON.stringify(driving.slice(0, 3))}`,
      );
    }

    for (const child of workers()) {
      const before = child.events.filter(
        (event) =>
          (child.startingAt === undefined || event.at < child.startingAt) &&
          (event.kind === "model-call" || event.kind === "job-start" || event.kind === "rt"),
      );
      check(
        before.length === 0,
        `${child.instanceId} worked before it was started: ${JSON.stringify(before[0])}`,
      );
    }

    // ---------------------------------------------------------------- checks: storage
    const markers = await readMarkers(db, prefix);
    const markersByThread = new Map<string, MarkerRow[]>();
    for (const marker of markers) {
      markersByThread.set(marker.thread_id, [...(markersByThread.get(marker.thread_id) ?? []), marker]);
    }
    const acked = new Map<string, Map<number, Set<string>>>();
    for (const child of processes) {
      for (const event of child.events) {
        if (event.kind !== "commit") continue;
        const byVersion = acked.get(event.threadId) ?? new Map<number, Set<string>>();
        acked.set(event.threadId, byVersion);
        const hashes = byVersion.get(event.version) ?? new Set<string>();
        byVersion.set(event.version, hashes.add(event.hash));
      }
    }
    const stats = { interrupted: 0, interruptedAfterEffect: 0, output: 0, ackedCommits: 0 };
    for (const run of planned) {
      const snapshot = (await storage.loadThread({ threadId: run.threadId })) as ThreadSnapshot | null;
      if (!snapshot) {
        failures.push(`${run.threadId}: no thread in storage`);
        continue;
      }
      const problems = checkThread(snapshot, run.token, markersByThread.get(run.threadId) ?? []);
      failures.push(...problems.map((problem) => `${run.threadId}: ${problem}`));
      const part = toolParts(snapshot)[0];
      if (part?.state === "output-error") {
        stats.interrupted++;
        if (markers.some((marker) => marker.tool_call_id === part.toolCallId)) stats.interruptedAfterEffect++;
      }
      if (part?.state === "output-available") stats.output++;
      // Every acknowledged commit is in the log, once: no commit lost, none doubled.
      const log = await storage.readEvents({ threadId: run.threadId, afterVersion: 0 });
      const versions = log.map((batch) => batch.version);
      check(
        versions.every((version, index) => version === index + 1) &&
          versions.length === snapshot.thread.version,
        `${run.threadId}: event log versions ${JSON.stringify(versions)} are not 1..${snapshot.thread.version}`,
      );
      const stored = new Map(log.map((batch) => [batch.version, hash(batch.events)]));
      for (const [version, hashes] of acked.get(run.threadId) ?? []) {
        stats.ackedCommits += hashes.size;
        check(hashes.size === 1, `${run.threadId}: two different commits were acknowledged as v${version}`);
        for (const item of hashes) {
          check(
            stored.get(version) === item,
            `${run.threadId}: acknowledged commit v${version} is not in storage as acknowledged`,
          );
        }
      }
    }
    const plannedThreads = new Set(planned.map((run) => run.threadId));
    for (const marker of markers) {
      check(plannedThreads.has(marker.thread_id), `marker of unknown thread ${marker.thread_id}`);
    }

    // ---------------------------------------------------------------- checks: never driven twice at once
    const intervals = processes.flatMap((child) => activity(child));
    // Two processes may overlap on a run only when the earlier one outlived its lease (a stall
    // longer than the lease, e.g. a starved event loop): the later one took the lease after it
    // expired, and the runtime's fences keep the earlier one's late writes out. Any other overlap
    // means a run was driven without its lease.
    const leases = new Map<string, Array<{ instanceId: string; from: number; until: number }>>();
    for (const child of processes) {
      for (const event of child.events) {
        if (event.kind !== "lease" || !event.held) continue;
        const list = leases.get(event.runId) ?? [];
        leases.set(event.runId, list);
        list.push({ instanceId: child.instanceId, from: event.from, until: event.until });
      }
    }
    const leaseExpiredUnder = ([a, b]: [Interval, Interval]) => {
      const runLeases = leases.get(a.runId) ?? [];
      // The lease the later process drove under: its last one taken before its span started.
      const taken = runLeases
        .filter((lease) => lease.instanceId === b.instanceId && lease.from <= b.start)
        .sort((x, y) => y.from - x.from)[0];
      if (!taken) return false;
      // The earlier process's lease then: its last one taken before that, expired by then.
      const before = runLeases
        .filter((lease) => lease.instanceId === a.instanceId && lease.from <= taken.from)
        .sort((x, y) => y.from - x.from)[0];
      return before !== undefined && before.until <= taken.from;
    };
    const overlaps = findOverlaps(intervals);
    const unexplained = overlaps.filter((pair) => !leaseExpiredUnder(pair));
    const describe = ([a, b]: [Interval, Interval]) =>
      `${a.runId}: ${a.instanceId} ${a.what} [${a.start}, ${a.end}${a.open ? " killed" : ""}] / ${b.instanceId} ${b.what} [${b.start}, ${b.end}${b.open ? " killed" : ""}]`;
    check(
      unexplained.length === 0,
      `runs driven by two processes at once without the earlier one's lease having expired: ${unexplained
        .slice(0, 5)
        .map(describe)
        .join("; ")}`,
    );
    const openAtKill = intervals.filter((interval) => interval.open);
    check(
      intervals.filter(
        (interval) =>
          interval.open &&
          processes.find((p) => p.instanceId === interval.instanceId)?.killedAt === undefined,
      ).length === 0,
      "a process that was not killed left a step or tool call unfinished",
    );

    // ---------------------------------------------------------------- statistics
    const byKind = (kind: string) =>
      processes.flatMap((child) => child.events.filter((event) => event.kind === kind));
    const jobStarts = byKind("job-start");
    const runJobs = jobStarts.filter((event) => event.job.kind === "run");
    const jobFailures = byKind("job-end").filter((event) => !event.ok);
    const sentBy = (role: string) =>
      processes
        .filter((child) => child.role === role)
        .reduce((sum, child) => sum + child.events.filter((event) => event.kind === "job-sent").length, 0);
    const sendFailures = byKind("job-send-error").length;
    const modelCalls = byKind("model-call");
    const killsMidRun = kills.filter((kill) =>
      openAtKill.some((interval) => interval.instanceId === kill.instanceId),
    );
    // How long after a kill another process worked on the runs the killed one held.
    const takeovers: number[] = [];
    for (const kill of kills) {
      for (const runId of new Set(
        openAtKill.filter((i) => i.instanceId === kill.instanceId).map((i) => i.runId),
      )) {
        const next = intervals
          .filter((interval) => interval.runId === runId && interval.start >= kill.at)
          .sort((a, b) => a.start - b.start)[0];
        if (next) takeovers.push(next.start - kill.at);
      }
    }
    // Where the time goes: how long a run's first job waited in the engine, how long handlers took.
    const firstDelivery = new Map<string, number>();
    for (const event of runJobs) {
      if (!firstDelivery.has(event.job.runId)) firstDelivery.set(event.job.runId, event.at);
      else firstDelivery.set(event.job.runId, Math.min(firstDelivery.get(event.job.runId)!, event.at));
    }
    const queueWaits = sentRuns
      .filter((event) => firstDelivery.has(event.runId))
      .map((event) => firstDelivery.get(event.runId)! - event.at);
    const jobStartAt = new Map(jobStarts.map((event) => [event.id, event.at]));
    const handling = byKind("job-end")
      .filter((event) => jobStartAt.has(event.id))
      .map((event) => event.at - jobStartAt.get(event.id)!);
    const runEnds = new Map(
      byKind("rt")
        .filter((event) => event.event === "run-end")
        .map((event) => [event.runId as string, event.at as number]),
    );
    const runTimes = sentRuns.flatMap((event) =>
      runEnds.has(event.runId) ? [runEnds.get(event.runId)! - event.at] : [],
    );
    const dist = (values: number[]) =>
      `median ${seconds(percentile(values, 0.5))}, p95 ${seconds(percentile(values, 0.95))}, max ${seconds(Math.max(0, ...values))}`;
    const runtimeErrors = new Map<string, number>();
    for (const event of byKind("runtime-error")) {
      const key = `${event.phase}: ${String(event.message)
        .replace(/[0-9a-f-]{36}|t\w{6}-\d{4}/g, "…")
        .slice(0, 140)}`;
      runtimeErrors.set(key, (runtimeErrors.get(key) ?? 0) + 1);
    }
    const dispatchErrors = byKind("dispatch-error");
    check(
      dispatchErrors.every((event) => !/dropped job/i.test(event.message)),
      `the dispatch dropped jobs: ${JSON.stringify(dispatchErrors.slice(0, 3))}`,
    );
    report.push(
      `runs ${planned.length}: completed ${statuses.completed ?? 0}; tool calls with output ${stats.output}, interrupted by a kill ${stats.interrupted} (${stats.interruptedAfterEffect} after their effect ran; recorded as "${INTERRUPTED_TEXT.slice(0, 40)}…", never re-run); effects recorded ${markers.length}`,
      overlaps.length === 0
        ? "driven by two processes at once: never"
        : `driven by two processes at once: ${overlaps.length} overlapping spans, each after the earlier process's lease expired under it (e.g. ${describe(overlaps[0]!)})`,
      `kills ${kills.length} (${killsMidRun.length} landed while the worker was in a model step or tool call: ${openAtKill.length} unfinished steps/calls); workers that worked ${workers().filter((child) => child.workingAt !== undefined).length}`,
      `takeover after a kill: median ${seconds(percentile(takeovers, 0.5))}, max ${seconds(Math.max(0, ...takeovers))} (lease ${options.leaseMs} ms, recovery every ${options.worker.recoveryIntervalMs} ms)`,
      `model calls ${modelCalls.length} for ${planned.length * 2} committed steps (${modelCalls.length - planned.length * 2} repeated after kills); acknowledged commits ${stats.ackedCommits}`,
      `jobs sent by API processes ${sentBy("api")}, by workers ${sentBy("worker")}, sends failed ${sendFailures}; deliveries ${jobStarts.length} (run ${runJobs.length}, wake ${jobStarts.length - runJobs.length}; ${(runJobs.length / planned.length).toFixed(1)} per run), thrown back ${jobFailures.length}`,
      `first job of a run waited in the engine: ${dist(queueWaits)}; a delivery's handler took: ${dist(handling)}; send to run end: ${dist(runTimes)}`,
      `runtime errors: ${runtimeErrors.size === 0 ? "none" : [...runtimeErrors].map(([key, count]) => `${count}x ${key}`).join(" | ")}`,
      `dispatch errors: ${dispatchErrors.length === 0 ? "none" : `${dispatchErrors.length}, e.g. ${dispatchErrors[0]!.message}`}`,
      `total ${at()}`,
    );
    return { failures, report };
  } catch (error) {
    throw new Error(
      `${String(error)}\nso far:\n  ${report.join("\n  ")}\n  failures: ${failures.slice(0, 20).join("\n  ")}`,
      {
        cause: error,
      },
    );
  } finally {
    await Promise.all(processes.map((child) => child.kill()));
    // For a closer look at a run: every line every process printed, in one file.
    const dump = process.env.PAI_DISPATCH_CLUSTER_DUMP;
    if (dump) {
      const lines = processes.flatMap((child) =>
        child.events.map((event) => JSON.stringify({ instance: child.instanceId, ...event })),
      );
      writeFileSync(`${dump}.${options.engine}.jsonl`, `${lines.join("\n")}\n`);
    }
    await cleanup(db, prefix, options.engine, bossSchema, queue, bullPrefix).catch((error) =>
      console.warn(`[dispatch cluster] cleanup failed: ${String(error)}`),
    );
    await db.destroy();
  }
}

export { assertChildProcessesCanRun, postgresUrl, redisUrl, unreachable } from "./cluster-services.ts";
