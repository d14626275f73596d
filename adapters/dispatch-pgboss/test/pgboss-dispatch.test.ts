import { type DispatchJob, PaiError } from "@pai/core";
import { type PgBossDispatchOptions, pgBossDispatch } from "@pai/dispatch-pgboss";
import { afterAll, describe, expect, it } from "vitest";
import { openTestBoss, postgresUrl, uniqueQueue, until } from "./postgres.js";

const schema = "pai_boss_adapter";
const admin = await openTestBoss(schema);
const queues = new Set<string>();

afterAll(async () => {
  if (!admin) return;
  for (const queue of queues) await admin.deleteQueue(queue);
  await admin.stop();
});

const runJob: DispatchJob = { kind: "run", threadId: "t-1", runId: "r-1", scopeKey: "s" };
// Nothing listens there: these checks must fail before any connection is tried.
const nowhere = "postgres://nobody@127.0.0.1:1/nothing";

function paiError(run: () => unknown): PaiError {
  try {
    run();
  } catch (error) {
    if (PaiError.isInstance(error)) return error;
    throw error;
  }
  throw new Error("expected a PaiError");
}

async function rejection(promise: Promise<unknown>): Promise<PaiError> {
  const error = await promise.then(
    () => undefined,
    (reason: unknown) => reason,
  );
  if (PaiError.isInstance(error)) return error;
  throw new Error(`expected a PaiError, got ${String(error)}`);
}

describe("pgBossDispatch options", () => {
  it.each<[string, unknown, string]>([
    ["neither connectionString nor boss", {}, "exactly one of `connectionString`"],
    ["both connectionString and boss", { connectionString: nowhere, boss: {} }, "exactly one of"],
    ["an empty connectionString", { connectionString: "" }, "`connectionString` must be"],
    ["schema beside boss", { boss: {}, schema: "x" }, "`schema` applies only"],
    [
      "a queue name pg-boss rejects",
      { connectionString: nowhere, queue: "runs and wakes" },
      "`queue` must be",
    ],
    ["an empty queue name", { connectionString: nowhere, queue: "" }, "`queue` must be"],
    ["a heartbeat under 10 s", { connectionString: nowhere, heartbeatSeconds: 5 }, "`heartbeatSeconds`"],
    ["an expiration over a day", { connectionString: nowhere, expireInSeconds: 86_401 }, "`expireInSeconds`"],
    ["a fractional retry delay", { connectionString: nowhere, retryDelay: 0.5 }, "`retryDelay`"],
    [
      "retryDelayMax under retryDelay",
      { connectionString: nowhere, retryDelay: 10, retryDelayMax: 5 },
      "`retryDelayMax`",
    ],
    ["a negative retry limit", { connectionString: nowhere, retryLimit: -1 }, "`retryLimit`"],
    [
      "polling faster than pg-boss allows",
      { connectionString: nowhere, pollingIntervalSeconds: 0.1 },
      "`pollingIntervalSeconds`",
    ],
    ["an onError that is no function", { connectionString: nowhere, onError: "log" }, "`onError`"],
  ])("rejects %s", (_, options, message) => {
    const error = paiError(() => pgBossDispatch(options as PgBossDispatchOptions));
    expect(error.code).toBe("INVALID_DEFINITION");
    expect(error.message).toContain(message);
  });

  it("names itself and is not in-process", async () => {
    const dispatch = pgBossDispatch({ connectionString: nowhere });
    expect(dispatch.specificationVersion).toBe("v1");
    expect(dispatch.name).toBe("pg-boss");
    expect(dispatch.inProcess).toBeUndefined();
    await dispatch.close();
  });

  it("checks jobs, notBefore and concurrency before touching the database", async () => {
    const dispatch = pgBossDispatch({ connectionString: nowhere });
    const badJob = await rejection(
      dispatch.send({ kind: "run", threadId: "t", scopeKey: "s" } as DispatchJob),
    );
    expect(badJob.code).toBe("INVALID_INPUT");
    expect(badJob.message).toContain("runId");
    const badInstant = await rejection(dispatch.send(runJob, { notBefore: "tomorrow-ish" }));
    expect(badInstant.code).toBe("INVALID_INPUT");
    for (const concurrency of [0, 1.5, Number.NaN]) {
      const error = await rejection(dispatch.work(async () => undefined, { concurrency }));
      expect(error.code).toBe("INVALID_DEFINITION");
    }
    await dispatch.close();
    const closed = await rejection(dispatch.send(runJob));
    expect(closed.code).toBe("CONFLICT");
  });
});

describe.skipIf(admin === null)("pgBossDispatch on Postgres", () => {
  const open = (options: Partial<PgBossDispatchOptions> = {}) => {
    const queue = uniqueQueue("adapter");
    queues.add(queue);
    const dispatch = pgBossDispatch({
      boss: admin!,
      queue,
      pollingIntervalSeconds: 0.5,
      ...options,
    } as PgBossDispatchOptions);
    return { queue, dispatch };
  };

  it("acknowledges and reports a job that is not a dispatch job, and never hands it over", async () => {
    const reported: unknown[] = [];
    const { queue, dispatch } = open({ onError: (error) => reported.push(error) });
    const seen: DispatchJob[] = [];
    const worker = await dispatch.work(async (job) => void seen.push(job), { concurrency: 2 });
    // Straight through pg-boss, as another producer (or a bad migration) might write it.
    const badId = await admin!.send(queue, { kind: "reboot", threadId: "t", scopeKey: "s" });
    await dispatch.send(runJob);
    await until(() => seen.length >= 1 && reported.length >= 1, 15_000, "the good job and the report");
    await worker.stop();
    expect(seen).toEqual([runJob]);
    expect(reported).toHaveLength(1);
    const error = reported[0] as PaiError;
    expect(PaiError.isInstance(error)).toBe(true);
    expect(error.code).toBe("INVALID_INPUT");
    expect(error.message).toContain('unknown dispatch job kind "reboot"');
    expect(error.details).toEqual({ queue, jobId: badId });
    const [stored] = await admin!.findJobs(queue, { id: badId! });
    expect(stored?.state).toBe("completed");
    await dispatch.close();
  });

  it("stores the job as sent, with notBefore as startAfter and the retry and heartbeat settings", async () => {
    const { queue, dispatch } = open({ heartbeatSeconds: 20, expireInSeconds: 120, retryDelay: 2 });
    const notBefore = new Date(Date.now() + 3_600_000).toISOString();
    const wake: DispatchJob = { kind: "wake", threadId: "t-2", scopeKey: "s", at: notBefore };
    await dispatch.send({ ...wake, extra: "not stored" } as DispatchJob, { notBefore });
    const [stored] = await admin!.findJobs<DispatchJob>(queue);
    expect(stored?.data).toEqual(wake);
    expect(stored?.startAfter.toISOString()).toBe(notBefore);
    expect(stored).toMatchObject({
      retryLimit: 100_000,
      retryDelay: 2,
      retryBackoff: true,
      retryDelayMax: 60,
      expireInSeconds: 120,
      heartbeatSeconds: 20,
    });
    await dispatch.close();
  });

  it("close stops its workers but leaves a PgBoss it was given running", async () => {
    const { queue, dispatch } = open();
    let started = 0;
    let finished = 0;
    await dispatch.work(
      async () => {
        started++;
        await new Promise((resolve) => setTimeout(resolve, 300));
        finished++;
      },
      { concurrency: 1 },
    );
    await dispatch.send(runJob);
    await until(() => started === 1, 15_000, "the delivery");
    await dispatch.close();
    // The handler in flight settled before close resolved.
    expect(finished).toBe(1);
    expect(await admin!.getQueue(queue)).not.toBeNull();
    const again = await rejection(dispatch.work(async () => undefined, { concurrency: 1 }));
    expect(again.code).toBe("CONFLICT");
  });

  it("starts and stops its own PgBoss on connectionString", async () => {
    const queue = uniqueQueue("owned");
    queues.add(queue);
    const dispatch = pgBossDispatch({
      connectionString: postgresUrl,
      schema,
      queue,
      pollingIntervalSeconds: 0.5,
    });
    const seen: DispatchJob[] = [];
    await dispatch.work(async (job) => void seen.push(job), { concurrency: 1 });
    await dispatch.send(runJob);
    await until(() => seen.length === 1, 15_000, "the delivery");
    await dispatch.close();
    await dispatch.close();
    expect(seen).toEqual([runJob]);
  });
});
