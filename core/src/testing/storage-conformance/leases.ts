// Proves run leases: one owner at a time until expiry, release by the owner only, leases
// survive commits (or are taken by one), and unleased running/queued runs are recoverable.
import { expect, it } from "vitest";
import type { RunRow } from "../../state/rows.js";
import { makeMessageRow, makeRunRow, makeThreadRow } from "../rows.js";
import type { ConformanceContext } from "./context.js";
import { at, sortByRunId } from "./helpers.js";

export function leasesTests(ctx: ConformanceContext): void {
  const { storage, id, commitOk, createThread, load, recoverableOf } = ctx;
  const setup = async (runs: Array<Partial<RunRow>>) => {
    const threadId = id("t");
    const rows = runs.map((run, index) =>
      makeRunRow({ threadId, runId: id("r"), createdAt: at(index), ...run }),
    );
    await createThread(
      makeThreadRow({ threadId, scopeKey: id("s") }),
      rows.map((run) => ({ type: "run-upserted", run })),
    );
    return { threadId, runs: rows };
  };
  const lease = (threadId: string, runId: string, owner: string, now: number, expiresAt: number) =>
    storage().acquireRunLease({ threadId, runId, owner, now: at(now), expiresAt: at(expiresAt) });

  it("acquires a free lease, renews it for the same owner, refuses others until it expires", async () => {
    const { threadId, runs } = await setup([{ status: "running" }]);
    const runId = runs[0].runId;
    expect(await lease(threadId, runId, "owner-a", 100, 130)).toBe(true);
    expect(await lease(threadId, runId, "owner-b", 110, 140)).toBe(false);
    expect(await lease(threadId, runId, "owner-a", 120, 150)).toBe(true);
    // Still held: the renewal moved the expiry from 130 to 150.
    expect(await lease(threadId, runId, "owner-b", 140, 170)).toBe(false);
    expect(await lease(threadId, runId, "owner-b", 160, 190)).toBe(true);
    expect(await lease(threadId, runId, "owner-a", 170, 200)).toBe(false);
    // Heartbeats are not thread changes.
    expect((await load(threadId)).thread.version).toBe(1);
  });

  it("releases a lease only for its owner", async () => {
    const { threadId, runs } = await setup([{ status: "running" }]);
    const runId = runs[0].runId;
    expect(await lease(threadId, runId, "owner-a", 100, 200)).toBe(true);
    await storage().releaseRunLease({ threadId, runId, owner: "owner-b" });
    expect(await lease(threadId, runId, "owner-b", 110, 210)).toBe(false);
    await storage().releaseRunLease({ threadId, runId, owner: "owner-a" });
    expect(await lease(threadId, runId, "owner-b", 120, 220)).toBe(true);
  });

  it("keeps a lease when a commit upserts its run", async () => {
    const { threadId, runs } = await setup([{ status: "running" }]);
    const run = runs[0];
    expect(await lease(threadId, run.runId, "owner-a", 100, 200)).toBe(true);
    await commitOk(
      threadId,
      1,
      [{ type: "run-upserted", run: { ...run, step: 1, updatedAt: at(110) } }],
      at(110),
    );
    expect(await lease(threadId, run.runId, "owner-b", 120, 220)).toBe(false);
    const recoverable = await recoverableOf(threadId, 120);
    expect(recoverable).toEqual([]);
  });

  it("takes a lease before the run's first commit and keeps it when the run is committed", async () => {
    const { threadId } = await setup([]);
    const run = makeRunRow({ threadId, runId: id("r"), status: "queued" });
    expect(await lease(threadId, run.runId, "owner-a", 100, 200)).toBe(true);
    expect(await lease(threadId, run.runId, "owner-b", 110, 210)).toBe(false);
    await commitOk(threadId, 1, [{ type: "run-upserted", run }], at(120));
    expect(await lease(threadId, run.runId, "owner-b", 130, 230)).toBe(false);
    expect(await recoverableOf(threadId, 130)).toEqual([]);
    expect(await recoverableOf(threadId, 200)).toEqual([{ threadId, runId: run.runId }]);
  });

  it("takes a run's lease in the commit that creates the run, and keeps other runs' leases", async () => {
    const { threadId, runs } = await setup([{ status: "running" }]);
    const other = runs[0];
    expect(await lease(threadId, other.runId, "owner-a", 100, 300)).toBe(true);
    const run = makeRunRow({ threadId, runId: id("r"), status: "running", createdAt: at(110) });
    const result = await storage().commit({
      threadId,
      expectedVersion: 1,
      events: [
        { type: "run-upserted", run },
        { type: "run-upserted", run: { ...other, step: 2, updatedAt: at(110) } },
      ],
      now: at(110),
      lease: { runId: run.runId, owner: "owner-b", expiresAt: at(200) },
    });
    expect(result).toEqual({ ok: true, version: 2 });
    expect(await lease(threadId, run.runId, "owner-a", 120, 220)).toBe(false);
    expect(await lease(threadId, run.runId, "owner-b", 130, 230)).toBe(true);
    expect(await lease(threadId, other.runId, "owner-b", 140, 240)).toBe(false);
    expect(await recoverableOf(threadId, 150)).toEqual([]);
    // A lease taken by a commit expires like any other.
    expect(await recoverableOf(threadId, 250)).toEqual([{ threadId, runId: run.runId }]);
  });

  it("takes a run's lease in the commit that creates its thread, with the first message", async () => {
    const threadId = id("t");
    const thread = makeThreadRow({ threadId, scopeKey: id("s") });
    const run = makeRunRow({ threadId, runId: id("r"), status: "running", createdAt: at(100) });
    const message = makeMessageRow({ threadId, messageId: id("m"), position: 0 });
    const result = await storage().commit({
      threadId,
      expectedVersion: 0,
      events: [
        { type: "thread-updated", thread },
        { type: "message-upserted", message },
        { type: "run-upserted", run },
        { type: "thread-updated", thread: { ...thread, status: "running", activeRunId: run.runId } },
      ],
      now: at(100),
      lease: { runId: run.runId, owner: "owner-a", expiresAt: at(200) },
    });
    expect(result).toEqual({ ok: true, version: 1 });
    const loaded = await load(threadId);
    expect(loaded.thread).toMatchObject({ status: "running", activeRunId: run.runId, version: 1 });
    expect(loaded.messages.map((row) => row.messageId)).toEqual([message.messageId]);
    expect(loaded.runs.map((row) => row.runId)).toEqual([run.runId]);
    expect(await lease(threadId, run.runId, "owner-b", 110, 210)).toBe(false);
    expect(await recoverableOf(threadId, 150)).toEqual([]);
    // A second creation of the same thread writes nothing, its lease included.
    const again = await storage().commit({
      threadId,
      expectedVersion: 0,
      events: [
        { type: "thread-updated", thread },
        { type: "run-upserted", run: { ...run, step: 5 } },
      ],
      now: at(120),
      lease: { runId: run.runId, owner: "owner-b", expiresAt: at(300) },
    });
    expect(again.ok).toBe(false);
    expect((await load(threadId)).runs.map((row) => row.step)).toEqual([run.step]);
    expect(await recoverableOf(threadId, 250)).toEqual([{ threadId, runId: run.runId }]);
  });

  it("rejects a commit lease for a run the commit does not upsert, writing nothing", async () => {
    const { threadId, runs } = await setup([{ status: "running" }]);
    const error = await storage()
      .commit({
        threadId,
        expectedVersion: 1,
        events: [{ type: "run-upserted", run: { ...runs[0], step: 1 } }],
        now: at(100),
        lease: { runId: "not-in-this-commit", owner: "owner-a", expiresAt: at(200) },
      })
      .then(
        () => null,
        (caught: unknown) => caught,
      );
    expect(error).toMatchObject({ code: "INVALID_INPUT" });
    expect((await load(threadId)).thread.version).toBe(1);
  });

  it("lists running and queued runs whose lease is absent or expired as recoverable", async () => {
    const { threadId, runs } = await setup([
      { status: "running" }, // 0: no lease -> recoverable
      { status: "queued" }, // 1: no lease -> recoverable
      { status: "running" }, // 2: lease expired -> recoverable
      { status: "running" }, // 3: lease held -> not recoverable
      { status: "waiting" }, // 4: parked -> never
      { status: "completed" }, // 5
      { status: "failed" }, // 6
      { status: "cancelled" }, // 7
    ]);
    expect(await lease(threadId, runs[2].runId, "owner-a", 100, 150)).toBe(true);
    expect(await lease(threadId, runs[3].runId, "owner-a", 100, 300)).toBe(true);
    const expected = [runs[0], runs[1], runs[2]].map((run) => ({ threadId, runId: run.runId }));
    expect(sortByRunId(await recoverableOf(threadId, 200))).toEqual(sortByRunId(expected));

    // Once finished, a run is no longer recoverable.
    await commitOk(
      threadId,
      1,
      [{ type: "run-upserted", run: { ...runs[0], status: "completed", finishedAt: at(210) } }],
      at(210),
    );
    expect(sortByRunId(await recoverableOf(threadId, 220))).toEqual(sortByRunId(expected.slice(1)));
    // After its expiry the held lease makes run 3 recoverable too.
    expect(sortByRunId(await recoverableOf(threadId, 400))).toEqual(
      sortByRunId([...expected.slice(1), { threadId, runId: runs[3].runId }]),
    );
    expect((await storage().listRecoverableRuns({ now: at(400), limit: 1 })).length).toBeLessThanOrEqual(1);
  });
}
