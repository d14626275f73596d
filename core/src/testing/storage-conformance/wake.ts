// Proves what wakes a thread up: `wakeAt` and `schedules` round-trip on the thread row (read back
// only when set), and listDueThreads lists threads whose wakeAt is at or before `now`, earliest
// first, bounded by `limit`, and follows every change of a thread's wakeAt.
import { expect, it } from "vitest";
import type { ScheduleRow, ThreadRow } from "../../state/rows.js";
import { makeMessageRow, makeThreadRow } from "../rows.js";
import type { ConformanceContext } from "./context.js";
import { at, jsonSample, tricky } from "./helpers.js";

function schedules(): ScheduleRow[] {
  return [
    {
      scheduleId: "daily",
      timing: { cron: "0 9 * * 1-5", timezone: "Europe/Berlin" },
      message: tricky,
      data: jsonSample(),
      state: "active",
      nextAt: at(100),
      fired: 2,
      lastFiredAt: at(50),
      createdAt: at(0),
      cancelledAt: null,
    },
    {
      scheduleId: "once",
      timing: { at: at(40) },
      message: "remind me",
      data: null,
      state: "done",
      nextAt: null,
      fired: 1,
      lastFiredAt: at(40),
      createdAt: at(0),
      cancelledAt: null,
    },
  ];
}

/** The row as storage reads it back: a null `wakeAt` or `schedules` is not there at all. */
function stored(thread: ThreadRow, version: number, updatedAt: string): ThreadRow {
  const { wakeAt, schedules: rows, ...rest } = thread;
  return {
    ...rest,
    ...(wakeAt == null ? {} : { wakeAt }),
    ...(rows == null ? {} : { schedules: rows }),
    version,
    updatedAt,
  };
}

/** Like `at`, in milliseconds: boundaries are exact to the millisecond. */
function atMs(milliseconds: number): string {
  return new Date(Date.UTC(2026, 0, 1) + milliseconds).toISOString();
}

function byWakeAt(a: { threadId: string; wakeAt: string }, b: { threadId: string; wakeAt: string }) {
  const time = Date.parse(a.wakeAt) - Date.parse(b.wakeAt);
  if (time !== 0) return time;
  return a.threadId < b.threadId ? -1 : a.threadId > b.threadId ? 1 : 0;
}

export function wakeTests(ctx: ConformanceContext): void {
  const { storage, id, commitOk, createThread, load } = ctx;

  /** The due threads among `threadIds`: the suite may share its database with other runs. */
  const dueOf = async (threadIds: string[], now: string) => {
    const all = await storage().listDueThreads({ now, limit: 10_000 });
    return all.filter((entry) => threadIds.includes(entry.threadId));
  };

  it("round-trips wakeAt and schedules on the thread row, and reads unset ones as absent", async () => {
    const scopeKey = id("s");
    const set = makeThreadRow({ threadId: id("t"), scopeKey, wakeAt: at(100), schedules: schedules() });
    const nulls = makeThreadRow({ threadId: id("t"), scopeKey, wakeAt: null, schedules: null });
    const absent = makeThreadRow({ threadId: id("t"), scopeKey });
    for (const thread of [set, nulls, absent]) await createThread(thread, [], at(1));

    expect((await load(set.threadId)).thread).toEqual(stored(set, 1, at(1)));
    for (const thread of [nulls, absent]) {
      const loaded = (await load(thread.threadId)).thread;
      expect(loaded).toEqual(stored(thread, 1, at(1)));
      expect(loaded).not.toHaveProperty("wakeAt");
      expect(loaded).not.toHaveProperty("schedules");
    }
    const { threads } = await storage().listThreads({ scopeKey, limit: 10 });
    const listed = threads.find((thread) => thread.threadId === set.threadId);
    expect(listed).toEqual(stored(set, 1, at(1)));
    // The log keeps the event exactly as committed, null fields included.
    const [batch] = await storage().readEvents({ threadId: nulls.threadId, afterVersion: 0 });
    expect(batch.events).toEqual([{ type: "thread-updated", thread: nulls }]);
  });

  it("keeps wakeAt and schedules through commits without a thread row, and replaces them with one", async () => {
    const thread = await createThread(
      makeThreadRow({ threadId: id("t"), scopeKey: id("s"), wakeAt: at(100), schedules: schedules() }),
      [],
      at(1),
    );
    const message = makeMessageRow({ threadId: thread.threadId, messageId: id("m"), position: 1 });
    await commitOk(thread.threadId, 1, [{ type: "message-upserted", message }], at(2));
    expect((await load(thread.threadId)).thread).toEqual(stored(thread, 2, at(2)));

    // A thread-updated event carries the whole row: fields it leaves out are cleared.
    const { wakeAt: _wakeAt, schedules: _schedules, ...without } = thread;
    await commitOk(thread.threadId, 2, [{ type: "thread-updated", thread: without }], at(3));
    expect((await load(thread.threadId)).thread).toEqual(stored(without, 3, at(3)));

    const emptied = { ...thread, wakeAt: at(300), schedules: [] };
    await commitOk(thread.threadId, 3, [{ type: "thread-updated", thread: emptied }], at(4));
    expect((await load(thread.threadId)).thread).toEqual(stored(emptied, 4, at(4)));
  });

  it("stores copies of schedules: mutating passed or returned rows never changes storage", async () => {
    const thread = makeThreadRow({ threadId: id("t"), scopeKey: id("s"), schedules: schedules() });
    await createThread(thread, [], at(1));
    const expected = structuredClone((await load(thread.threadId)).thread);

    thread.schedules![0].state = "cancelled";
    (thread.schedules![0].data as { numbers: number[] }).numbers.push(7);
    const loaded = (await load(thread.threadId)).thread;
    loaded.schedules![1].fired = 99;
    loaded.schedules!.length = 0;

    expect((await load(thread.threadId)).thread).toEqual(expected);
  });

  it("lists threads whose wakeAt is at or before now, earliest first, then by threadId", async () => {
    const scopeKey = id("s");
    // Equal instants on purpose: ties are broken by threadId ascending.
    const wakes = [at(10), at(5), at(5), at(20), null, atMs(10_001), at(5)];
    const threads: ThreadRow[] = [];
    for (const wakeAt of wakes) {
      threads.push(await createThread(makeThreadRow({ threadId: id("t"), scopeKey, wakeAt }), [], at(1)));
    }
    const ids = threads.map((thread) => thread.threadId);
    const dueAt = (now: string) =>
      threads
        .filter((thread) => thread.wakeAt != null && Date.parse(thread.wakeAt) <= Date.parse(now))
        .map((thread) => ({ threadId: thread.threadId, wakeAt: thread.wakeAt! }))
        .sort(byWakeAt);

    expect(await dueOf(ids, atMs(4_999))).toEqual([]);
    // The boundary: a thread is due from its wakeAt on, to the millisecond.
    for (const [now, count] of [
      [at(5), 3],
      [atMs(9_999), 3],
      [at(10), 4],
      [atMs(10_001), 5],
      [at(1000), 6],
    ] as const) {
      const due = await dueOf(ids, now);
      expect(due).toEqual(dueAt(now));
      expect(due).toHaveLength(count);
    }
  });

  it("returns at most limit threads, the earliest due first", async () => {
    const scopeKey = id("s");
    const ids: string[] = [];
    for (const seconds of [3, 1, 2]) {
      const thread = makeThreadRow({ threadId: id("t"), scopeKey, wakeAt: at(seconds) });
      ids.push((await createThread(thread, [], at(1))).threadId);
    }
    const now = at(10);
    const all = await storage().listDueThreads({ now, limit: 10_000 });
    expect(all.filter((entry) => ids.includes(entry.threadId))).toHaveLength(3);
    for (const limit of [1, 2, 3]) {
      expect(await storage().listDueThreads({ now, limit })).toEqual(all.slice(0, limit));
    }
  });

  it("follows a thread's wakeAt: cleared it is no longer due, moved later it is due only then", async () => {
    const scopeKey = id("s");
    const cleared = await createThread(
      makeThreadRow({ threadId: id("t"), scopeKey, wakeAt: at(100) }),
      [],
      at(1),
    );
    const moved = await createThread(
      makeThreadRow({ threadId: id("t"), scopeKey, wakeAt: at(100) }),
      [],
      at(1),
    );
    const ids = [cleared.threadId, moved.threadId];
    expect(await dueOf(ids, at(100))).toEqual(
      [
        { threadId: cleared.threadId, wakeAt: at(100) },
        { threadId: moved.threadId, wakeAt: at(100) },
      ].sort(byWakeAt),
    );

    await commitOk(
      cleared.threadId,
      1,
      [{ type: "thread-updated", thread: { ...cleared, wakeAt: null } }],
      at(2),
    );
    await commitOk(
      moved.threadId,
      1,
      [{ type: "thread-updated", thread: { ...moved, wakeAt: at(200) } }],
      at(2),
    );
    expect(await dueOf(ids, at(150))).toEqual([]);
    expect(await dueOf(ids, at(200))).toEqual([{ threadId: moved.threadId, wakeAt: at(200) }]);
    expect(await dueOf(ids, at(10_000))).toEqual([{ threadId: moved.threadId, wakeAt: at(200) }]);

    // Moved earlier again, it is due at once.
    await commitOk(
      moved.threadId,
      2,
      [{ type: "thread-updated", thread: { ...moved, wakeAt: at(50) } }],
      at(3),
    );
    expect(await dueOf(ids, at(60))).toEqual([{ threadId: moved.threadId, wakeAt: at(50) }]);
  });

  it("rejects a limit that is not a positive integer and a now that is not a timestamp", async () => {
    for (const limit of [0, -1, 1.5, Number.NaN]) {
      await expect(storage().listDueThreads({ now: at(1), limit })).rejects.toMatchObject({
        code: "INVALID_INPUT",
      });
    }
    for (const now of ["not a time", ""]) {
      await expect(storage().listDueThreads({ now, limit: 10 })).rejects.toMatchObject({
        code: "INVALID_INPUT",
      });
    }
  });
}
