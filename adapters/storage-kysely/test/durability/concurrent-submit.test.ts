import type { ActionRow, ThreadSnapshot } from "@pai/core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { kyselyStorage, migrateToLatest } from "../../src/index.js";
import { openEngine } from "../support/engines.js";
import { createMarkerTable, dropMarkerTable, readMarkers } from "./fixtures/durability-agent.js";
import { assertChildProcessesCanRun, WorkerProcess, WorkerRequestError } from "./worker-process.js";

const ROUNDS = 3;
const SUBMITS = 50;

describe("two runtime processes on one Postgres", async () => {
  const engine = await openEngine("postgres", "dur_submit");
  if ("skip" in engine) {
    it.skip(`skipped: ${engine.skip}`, () => {});
    return;
  }
  const { db, prefix } = engine;
  const storage = kyselyStorage({ db, tablePrefix: prefix });
  const workers: WorkerProcess[] = [];

  beforeAll(async () => {
    assertChildProcessesCanRun();
    await migrateToLatest(db, { tablePrefix: prefix });
    await createMarkerTable(db, prefix);
    workers.push(new WorkerProcess({ instanceId: "proc-a" }), new WorkerProcess({ instanceId: "proc-b" }));
    await Promise.all(workers.map((worker) => worker.ready()));
    await Promise.all(workers.map((worker) => worker.request("open", { prefix, leaseMs: 2_000 })));
  });

  afterAll(async () => {
    await Promise.all(workers.map((worker) => worker.stop()));
    await dropMarkerTable(db, prefix);
    await engine.dispose();
  });

  async function settledThread(threadId: string, timeoutMs = 15_000): Promise<ThreadSnapshot> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const snapshot = (await storage.loadThread({ threadId }))!;
      const run = snapshot.runs.at(-1);
      if (run && ["completed", "failed", "cancelled"].includes(run.status)) return snapshot;
      if (Date.now() > deadline) throw new Error(`thread ${threadId} did not settle: run ${run?.status}`);
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
  }

  it(`${SUBMITS} concurrent submits of one action over both processes: one accepted, ${SUBMITS - 1} CONFLICT, one re-entry (${ROUNDS} rounds)`, async () => {
    const [a, b] = workers as [WorkerProcess, WorkerProcess];
    const summary: string[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      const threadId = `submit-race-${round}`;
      // Alternate which process parks the thread, so the race does not favour its cache.
      const owner = round % 2 === 0 ? a : b;
      await owner.request("create", { prefix, threadId });
      await owner.request("send", { prefix, threadId, plan: [["approve"]] });
      await owner.request("idle", { prefix, threadId });
      const parked = await owner.request<ThreadSnapshot>("get", { prefix, threadId });
      expect(parked.runs.map((run) => run.status)).toEqual(["waiting"]);
      const pending = parked.actions.filter((action) => action.state === "pending");
      expect(pending.map((action) => action.name)).toEqual(["approve.approval"]);
      const action = pending[0]!;

      const request = {
        op: "submit",
        args: { prefix, threadId, actionId: action.actionId, payload: { approved: true } },
      };
      const half = Array.from({ length: SUBMITS / 2 }, () => request);
      // Whichever process is written to first has a head start of microseconds; alternate it.
      type Submitted = Array<Promise<unknown>>;
      let fromA: Submitted;
      let fromB: Submitted;
      if (round % 2 === 0) {
        fromA = a.requestMany(half);
        fromB = b.requestMany(half);
      } else {
        fromB = b.requestMany(half);
        fromA = a.requestMany(half);
      }
      const outcomes = await Promise.allSettled([...fromA, ...fromB]);

      const accepted = outcomes
        .map((outcome, index) => ({ outcome, process: index < SUBMITS / 2 ? "proc-a" : "proc-b" }))
        .filter(({ outcome }) => outcome.status === "fulfilled");
      const codes = outcomes.flatMap((outcome) =>
        outcome.status === "rejected"
          ? [outcome.reason instanceof WorkerRequestError ? outcome.reason.code : String(outcome.reason)]
          : [],
      );
      expect(accepted).toHaveLength(1);
      expect(codes).toEqual(Array.from({ length: SUBMITS - 1 }, () => "CONFLICT"));
      const winner = accepted[0]!;
      const resolved = (winner.outcome as PromiseFulfilledResult<{ action: ActionRow }>).value.action;
      expect(resolved).toMatchObject({ actionId: action.actionId, state: "submitted" });

      const done = await settledThread(threadId);
      expect(done.runs.map((run) => run.status)).toEqual(["completed"]);
      expect(done.actions.map((item) => [item.actionId, item.state])).toEqual([
        [action.actionId, "submitted"],
      ]);
      const tail = done.messages.at(-1)!.message.parts as Array<Record<string, unknown>>;
      const toolPart = tail.find((part) => part.toolCallId === action.toolCallId);
      expect(toolPart).toMatchObject({
        state: "output-available",
        output: { approved: true, by: winner.process },
      });
      expect(tail.at(-1)).toMatchObject({ type: "text", text: "done" });

      const markers = (await readMarkers(db, prefix)).filter((row) => row.tool_call_id === action.toolCallId);
      const reentries = markers.filter((row) => row.entry === "resume");
      expect(markers.filter((row) => row.entry === "initial")).toHaveLength(1);
      expect(reentries).toHaveLength(1);
      expect(reentries[0]!.instance).toBe(winner.process);
      summary.push(
        `round ${round + 1}: accepted by ${winner.process}, ${codes.length} CONFLICT, ${reentries.length} re-entry`,
      );
    }
    console.log(
      `[durability] concurrent submits (${SUBMITS} per round, 25 per process):\n  ${summary.join("\n  ")}`,
    );
  });
});
