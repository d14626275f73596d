import { isDeepStrictEqual } from "node:util";
import {
  type ActionRow,
  createPai,
  INTERRUPTED_TEXT,
  scopeFromIdentity,
  type ThreadEvent,
  type ThreadSnapshot,
} from "@pai/core";
import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
// Run analysis is an engine internal (not on any entry); the test reads it from core's source.
import { analyzeRun } from "../../../../core/src/state/transitions.js";
import { kyselyStorage, migrateToLatest, tableNames } from "../../src/index.js";
import { openEngine } from "../support/engines.js";
import {
  createDurabilityAgent,
  createMarkerTable,
  dropMarkerTable,
  durabilityIdentity,
  type MarkerRow,
  type Plan,
  planModel,
  readMarkers,
} from "./fixtures/durability-agent.js";
import { assertChildProcessesCanRun, WorkerProcess } from "./worker-process.js";

const TRIALS = 30;
const WAVE = 10;
const LEASE_MS = 300;
/**
 * A kill point is measured in progress, not wall time, so it lands inside the workload however
 * loaded the machine is: after a random number of runtime events (a thread's cycle emits about
 * 25; two lanes run at once), plus a random few milliseconds.
 */
const KILL_AFTER_EVENTS: readonly [number, number] = [1, 60];
const KILL_JITTER_MS = 15;
/** Per thread: two work calls, then a work call plus a suspension, then (after approval) "done". */
const PLAN: Plan = [
  ["work", "work"],
  ["work", "approve"],
];

type ToolPart = {
  type: string;
  toolCallId: string;
  state: string;
  output?: unknown;
  errorText?: string;
};

const isToolPart = (part: { type: string }): part is ToolPart =>
  part.type.startsWith("tool-") || part.type === "dynamic-tool";
const toolName = (part: ToolPart) => part.type.slice("tool-".length);
const toolParts = (snapshot: ThreadSnapshot): ToolPart[] =>
  snapshot.messages.flatMap((row) => (row.message.parts as Array<{ type: string }>).filter(isToolPart));
const plain = <T>(value: T): T => JSON.parse(JSON.stringify(value)) as T;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

type Acked = { threadId: string; version: number; events: ThreadEvent[] };

describe("crash recovery on Postgres", async () => {
  const engine = await openEngine("postgres", "dur_crash");
  if ("skip" in engine) {
    it.skip(`skipped: ${engine.skip}`, () => {});
    return;
  }
  const { db, prefix } = engine;
  const storage = kyselyStorage({ db, tablePrefix: prefix });

  beforeAll(async () => {
    assertChildProcessesCanRun();
    await migrateToLatest(db, { tablePrefix: prefix });
    await createMarkerTable(db, prefix);
  });

  afterAll(async () => {
    await dropMarkerTable(db, prefix);
    await engine.dispose();
  });

  it(`SIGKILL at random points in ${TRIALS} trials: recover() leaves every thread consistent`, async () => {
    const stats = {
      threads: 0,
      ackedCommits: 0,
      adopted: 0,
      interruptedCalls: 0,
      interruptedAfterSideEffect: 0,
      reissuedSteps: 0,
      runningWithStartedCalls: 0,
      waitingAtKill: 0,
      pendingChecked: 0,
      killStages: new Map<string, number>(),
      killPoints: [] as number[],
      recoveredCompleted: 0,
      recoveredWaiting: 0,
    };
    const failures: string[] = [];
    const check = (ok: boolean, message: string) => {
      if (!ok) failures.push(message);
    };

    // Children are spawned a wave at a time; the next wave starts loading (imports dominate
    // their start-up) while the test process recovers and checks the previous one.
    const spawnWave = (first: number) =>
      Array.from(
        { length: Math.min(WAVE, TRIALS - first) },
        (_, index) =>
          new WorkerProcess({
            instanceId: `crash${first + index}`,
            poolMax: 3,
            toolDelayMs: [0, 15],
            modelDelayMs: [0, 15],
          }),
      );
    const children: WorkerProcess[] = [];
    const started = Date.now();
    const timings: string[] = [];
    let upcoming = spawnWave(0);
    try {
      for (let first = 0; first < TRIALS; first += WAVE) {
        const wave = upcoming;
        children.push(...wave);
        // 1. Start each child's workload and SIGKILL it at a random moment.
        await Promise.all(
          wave.map(async (worker) => {
            await worker.ready();
            await worker.request("open", { prefix, leaseMs: LEASE_MS, report: true });
          }),
        );
        timings.push(`wave ${first / WAVE + 1}: ready ${((Date.now() - started) / 1000).toFixed(1)} s`);
        await Promise.all(
          wave.map(async (worker) => {
            const seen = worker.events.length;
            await worker.request("workload", { prefix, lanes: 2, plan: PLAN });
            const target =
              KILL_AFTER_EVENTS[0] +
              Math.floor(Math.random() * (KILL_AFTER_EVENTS[1] - KILL_AFTER_EVENTS[0] + 1));
            const reached = await worker.waitForCount(
              (event) => event.kind === "runtime",
              target,
              seen,
              30_000,
            );
            check(reached, `${worker.config.instanceId} made no progress before its kill point`);
            await sleep(Math.random() * KILL_JITTER_MS);
            await worker.kill();
            stats.killPoints.push(target);
            const last = worker.events
              .slice(seen)
              .filter((event) => event.kind === "runtime")
              .at(-1);
            const stage = String(last?.event ?? "no-event-yet");
            stats.killStages.set(stage, (stats.killStages.get(stage) ?? 0) + 1);
            const laneErrors = worker.events.filter((event) => event.kind === "lane-error");
            check(
              laneErrors.length === 0,
              `${worker.config.instanceId} lane errors: ${JSON.stringify(laneErrors)}`,
            );
          }),
        );
        upcoming = first + WAVE < TRIALS ? spawnWave(first + WAVE) : [];
        const acked: Acked[] = wave.flatMap((worker) =>
          worker.events.filter((event) => event.kind === "commit").map((event) => event as unknown as Acked),
        );
        stats.ackedCommits += acked.length;

        timings.push(`killed ${((Date.now() - started) / 1000).toFixed(1)} s`);
        // 2. Leases of the killed processes expire; classify what recovery will face.
        await sleep(LEASE_MS + 150);
        const owners = wave.map((worker) => worker.config.instanceId);
        const threadIds = (
          await sql<{
            thread_id: string;
          }>`select thread_id from ${sql.table(tableNames(prefix).threads)}`.execute(db)
        ).rows
          .map((row) => row.thread_id)
          .filter((threadId) => owners.some((owner) => threadId.startsWith(`${owner}-`)));
        stats.threads += threadIds.length;
        for (const threadId of threadIds) {
          const snapshot = (await storage.loadThread({ threadId }))!;
          for (const run of snapshot.runs) {
            if (run.status === "waiting") stats.waitingAtKill++;
            if (run.status !== "running") continue;
            if (analyzeRun(snapshot, run.runId).unsettled.length > 0) stats.runningWithStartedCalls++;
            else stats.reissuedSteps++;
          }
        }

        // 3. A fresh runtime adopts the expired runs.
        const recoverer = createPai({
          scope: scopeFromIdentity,
          agents: {
            durability: createDurabilityAgent({ db, prefix, instanceId: `recoverer${first}` }),
          },
          storage,
          model: planModel({ instanceId: `recoverer${first}` }),
          leaseMs: LEASE_MS,
          instanceId: `recoverer${first}`,
          onRuntimeError: (report) =>
            failures.push(`runtime error (${report.phase}): ${String(report.error)}`),
        });
        try {
          const deadline = Date.now() + 20_000;
          for (;;) {
            stats.adopted += await recoverer.recover();
            await Promise.all(threadIds.map((threadId) => recoverer.waitForIdle(threadId)));
            const left = await storage.listRecoverableRuns({ now: new Date().toISOString(), limit: 100 });
            if (left.filter((run) => threadIds.includes(run.threadId)).length === 0) break;
            if (Date.now() > deadline) throw new Error(`runs still recoverable: ${JSON.stringify(left)}`);
            await sleep(50);
          }

          timings.push(`recovered ${((Date.now() - started) / 1000).toFixed(1)} s`);
          // 4. Every thread is consistent.
          const markers = await readMarkers(db, prefix);
          const markersOf = (toolCallId: string, entry: string) =>
            markers.filter((row) => row.tool_call_id === toolCallId && row.entry === entry);
          for (const threadId of threadIds) {
            const snapshot = (await storage.loadThread({ threadId }))!;
            const log = await storage.readEvents({ threadId, afterVersion: 0 });
            check(
              JSON.stringify(log.map((batch) => batch.version)) ===
                JSON.stringify(Array.from({ length: snapshot.thread.version }, (_, index) => index + 1)),
              `${threadId}: event log versions are not 1..${snapshot.thread.version}`,
            );
            // No committed change lost: every commit the killed process saw acknowledged is in the log.
            for (const commit of acked.filter((item) => item.threadId === threadId)) {
              const stored = log.find((batch) => batch.version === commit.version);
              check(
                stored !== undefined && isDeepStrictEqual(plain(stored.events), commit.events),
                `${threadId}: acknowledged commit v${commit.version} differs in storage: ${JSON.stringify(commit.events)} vs ${JSON.stringify(stored?.events)}`,
              );
            }
            for (const run of snapshot.runs) {
              check(
                run.status === "completed" || run.status === "waiting",
                `${threadId}: run ${run.runId} ended ${run.status} (${run.error ?? ""})`,
              );
              if (run.status === "completed") stats.recoveredCompleted++;
              if (run.status === "waiting") {
                stats.recoveredWaiting++;
                check(
                  analyzeRun(snapshot, run.runId).pending.length > 0,
                  `${threadId}: run ${run.runId} waits without a pending action`,
                );
              }
            }
            const pendingCalls = new Set(
              snapshot.actions
                .filter((action) => action.state === "pending")
                .map((action) => action.toolCallId),
            );
            const parts = toolParts(snapshot);
            const finalPart = new Map(parts.map((part) => [part.toolCallId, part]));
            for (const part of parts) {
              const initial = markersOf(part.toolCallId, "initial");
              check(initial.length <= 1, `${threadId}: ${part.toolCallId} executed ${initial.length} times`);
              if (pendingCalls.has(part.toolCallId)) {
                check(
                  part.state === "input-available",
                  `${threadId}: ${part.toolCallId} has a pending action but is ${part.state}`,
                );
                continue;
              }
              if (part.state === "output-error") {
                check(
                  part.errorText === INTERRUPTED_TEXT,
                  `${threadId}: ${part.toolCallId} failed with "${part.errorText}"`,
                );
                stats.interruptedCalls++;
                const executed = markersOf(
                  part.toolCallId,
                  toolName(part) === "approve" ? "resume" : "initial",
                );
                if (executed.length > 0) stats.interruptedAfterSideEffect++;
                check(
                  executed.length <= 1,
                  `${threadId}: interrupted ${part.toolCallId} executed ${executed.length} times`,
                );
                continue;
              }
              check(part.state === "output-available", `${threadId}: ${part.toolCallId} left ${part.state}`);
              const entry = toolName(part) === "approve" ? "resume" : "initial";
              const executed = markersOf(part.toolCallId, entry);
              check(
                executed.length === 1 && (part.output as { by?: string }).by === executed[0]!.instance,
                `${threadId}: ${part.toolCallId} output ${JSON.stringify(part.output)} vs executions ${JSON.stringify(executed)}`,
              );
            }
            // Every execution belongs to a committed call of this thread: nothing ran for an uncommitted step.
            for (const marker of markers.filter((row: MarkerRow) => row.thread_id === threadId)) {
              check(
                finalPart.has(marker.tool_call_id),
                `${threadId}: ${marker.tool_call_id} ran but is not in the thread`,
              );
            }
            // Committed outputs and pending actions the killed process saw are intact.
            const lastAcked = new Map<string, ToolPart>();
            const ackedActions = new Map<string, ActionRow>();
            for (const commit of acked.filter((item) => item.threadId === threadId)) {
              for (const event of commit.events) {
                if (event.type === "message-upserted") {
                  for (const part of (event.message.message.parts as Array<{ type: string }>).filter(
                    isToolPart,
                  )) {
                    lastAcked.set(part.toolCallId, part);
                  }
                }
                if (event.type === "action-upserted") ackedActions.set(event.action.actionId, event.action);
              }
            }
            for (const [toolCallId, part] of lastAcked) {
              if (part.state !== "output-available" && part.state !== "output-error") continue;
              const now = finalPart.get(toolCallId);
              check(
                now?.state === part.state && isDeepStrictEqual(plain(now.output), plain(part.output)),
                `${threadId}: committed outcome of ${toolCallId} was lost or changed`,
              );
            }
            for (const action of ackedActions.values()) {
              if (action.state !== "pending") continue;
              stats.pendingChecked++;
              const now = snapshot.actions.find((item) => item.actionId === action.actionId);
              // The child may have committed its own submit right before the kill cut the acknowledgement.
              const intact =
                now?.state === "pending" ||
                (now?.state === "submitted" && isDeepStrictEqual(now.resume, { approved: true }));
              check(
                Boolean(intact) && now?.toolCallId === action.toolCallId,
                `${threadId}: pending action ${action.actionId} is ${now?.state ?? "missing"}`,
              );
            }
          }

          timings.push(`checked ${((Date.now() - started) / 1000).toFixed(1)} s`);
          // 5. The pending actions still work: answering them completes every run, each re-entering once.
          for (const threadId of threadIds) {
            const snapshot = (await storage.loadThread({ threadId }))!;
            for (const action of snapshot.actions.filter((item) => item.state === "pending")) {
              await recoverer.service.actions.submit({
                identity: durabilityIdentity,
                threadId,
                actionId: action.actionId,
                payload: { approved: true },
              });
            }
            await recoverer.waitForIdle(threadId);
          }
          const resumed = await readMarkers(db, prefix);
          for (const threadId of threadIds) {
            const snapshot = (await storage.loadThread({ threadId }))!;
            for (const run of snapshot.runs) {
              check(
                run.status === "completed",
                `${threadId}: after approval run ${run.runId} is ${run.status}`,
              );
            }
            for (const action of snapshot.actions) {
              const reentries = resumed.filter(
                (row) => row.tool_call_id === action.toolCallId && row.entry === "resume",
              );
              check(
                reentries.length <= 1,
                `${threadId}: ${action.toolCallId} re-entered ${reentries.length} times`,
              );
            }
          }
        } finally {
          await recoverer.close();
        }
        timings.push(`done ${((Date.now() - started) / 1000).toFixed(1)} s`);
      }
    } finally {
      await Promise.all([...children, ...upcoming].map((child) => child.kill()));
    }

    const points = [...stats.killPoints].sort((a, b) => a - b);
    console.log(
      [
        `[durability] crash test: ${TRIALS} child processes SIGKILLed after ${points[0]}-${points.at(-1)} runtime events of their workload (median ${points[Math.floor(points.length / 2)]}) + 0-${KILL_JITTER_MS} ms, lease ${LEASE_MS} ms`,
        `  ${timings.join(", ")}`,
        `  last runtime event before the kill: ${[...stats.killStages].map(([stage, count]) => `${stage} x${count}`).join(", ")}`,
        `  threads ${stats.threads}, acknowledged commits ${stats.ackedCommits}, runs adopted by recover() ${stats.adopted}`,
        `  at kill: ${stats.reissuedSteps} running runs with no started tool call (the recoverer issues their next model step again), ${stats.runningWithStartedCalls} running runs with tool calls in flight, ${stats.waitingAtKill} waiting runs`,
        `  after recovery: runs completed ${stats.recoveredCompleted}, waiting ${stats.recoveredWaiting}; interrupted calls ${stats.interruptedCalls} (${stats.interruptedAfterSideEffect} had run their side effect, none re-run); pending actions checked ${stats.pendingChecked}`,
      ].join("\n"),
    );
    expect(failures).toEqual([]);
    expect(stats.killPoints).toHaveLength(TRIALS);
  }, 170_000);
});
