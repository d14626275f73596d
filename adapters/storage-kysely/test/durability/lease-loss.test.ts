import { createPai, scopeFromIdentity, type ThreadEvent } from "@pai/core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { kyselyStorage, migrateToLatest } from "../../src/index.js";
import { openEngine } from "../support/engines.js";
import {
  createDurabilityAgent,
  createMarkerTable,
  dropMarkerTable,
  planModel,
  readMarkers,
  STALL_MS,
} from "./fixtures/durability-agent.js";
import { assertChildProcessesCanRun, WorkerProcess } from "./worker-process.js";

const LEASE_MS = 300;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Not one of the issue's four acceptance items, but the lease contract behind them: a process
 * whose event loop stalls past its lease (GC pause, starved CPU, lost DB connection for the
 * heartbeat) is alive but no longer the run's owner once another instance adopts the run.
 */
describe("lease loss on Postgres", async () => {
  const engine = await openEngine("postgres", "dur_lease");
  if ("skip" in engine) {
    it.skip(`skipped: ${engine.skip}`, () => {});
    return;
  }
  const { db, prefix } = engine;
  const storage = kyselyStorage({ db, tablePrefix: prefix });
  const stalled = new WorkerProcess({ instanceId: "stalled" });

  beforeAll(async () => {
    assertChildProcessesCanRun();
    await migrateToLatest(db, { tablePrefix: prefix });
    await createMarkerTable(db, prefix);
    await stalled.ready();
    await stalled.request("open", { prefix, leaseMs: LEASE_MS, report: true });
  });

  afterAll(async () => {
    await stalled.stop();
    await dropMarkerTable(db, prefix);
    await engine.dispose();
  });

  it("a process that stalled past its lease writes nothing to a run another instance adopted", async () => {
    const threadId = "stall";
    await stalled.request("create", { prefix, threadId });
    await stalled.request("send", { prefix, threadId, plan: [["stall"], ["work"]] });
    // The stall tool records its marker, then blocks the child's event loop for STALL_MS.
    const deadline = Date.now() + 20_000;
    while (!(await readMarkers(db, prefix)).some((row) => row.instance === "stalled")) {
      if (Date.now() > deadline) throw new Error("the stall tool never started");
      await sleep(10);
    }
    await sleep(LEASE_MS + 150);
    const adoptedAt = (await storage.loadThread({ threadId }))!.thread.version;

    // The adopting instance's own tool call is still running when the stalled process wakes up.
    const recoverer = createPai({
      scope: scopeFromIdentity,
      agents: {
        durability: createDurabilityAgent({
          db,
          prefix,
          instanceId: "recoverer",
          toolDelayMs: [STALL_MS / 2, STALL_MS / 2],
        }),
      },
      storage,
      model: planModel({ instanceId: "recoverer" }),
      leaseMs: LEASE_MS,
      instanceId: "recoverer",
    });
    try {
      expect(await recoverer.recover()).toBe(1);
      await recoverer.waitForIdle(threadId);
      await stalled.request("idle", { prefix, threadId });
      await recoverer.waitForIdle(threadId);
    } finally {
      await recoverer.close();
    }

    const final = (await storage.loadThread({ threadId }))!;
    const parts = final.messages.flatMap(
      (row) =>
        row.message.parts as Array<{ type: string; state?: string; output?: unknown; errorText?: string }>,
    );
    const timeline = (await storage.readEvents({ threadId, afterVersion: adoptedAt })).map(
      (batch) => `v${batch.version}: ${summarize(batch.events)}`,
    );
    const lateWrites = stalled.events
      .filter((event) => event.kind === "commit" && (event.version as number) > adoptedAt)
      .map((event) => `v${event.version as number}: ${summarize(event.events as ThreadEvent[])}`);
    console.log(
      `[durability] lease loss: run adopted at v${adoptedAt}; commits after adoption:\n  ${timeline.join("\n  ")}\n  of which by the stalled process: ${lateWrites.length > 0 ? lateWrites.join("; ") : "none"}`,
    );

    expect(lateWrites).toEqual([]);
    const work = parts.filter((part) => part.type === "tool-work");
    expect(work).toHaveLength(1);
    expect(work[0]).toMatchObject({ state: "output-available", output: { by: "recoverer" } });
    expect(final.runs.map((run) => run.status)).toEqual(["completed"]);
  });
});

function summarize(events: ThreadEvent[]): string {
  return events
    .map((event) => {
      if (event.type !== "message-upserted") return event.type;
      const parts = event.message.message.parts as Array<{ type: string; state?: string }>;
      return `message(${parts.map((part) => (part.state ? `${part.type}:${part.state}` : part.type)).join(",")})`;
    })
    .join(" + ");
}
