import { type DispatchJob, type DispatchV1, PaiError } from "@pai/core";
import { type BullMqDispatchOptions, bullMqDispatch } from "@pai/dispatch-bullmq";
import { Queue } from "bullmq";
import { Redis } from "ioredis";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { openTestRedis } from "./redis.js";

const redis = await openTestRedis("adapter");
const URL_ = "redis://127.0.0.1:6379";

const run = (index: number): DispatchJob => ({
  kind: "run",
  threadId: `thread-${index}`,
  runId: `run-${index}`,
  scopeKey: "scope",
});
const queueName = () => `adapter_${Math.random().toString(36).slice(2, 10)}`;

async function until(check: () => boolean | Promise<boolean>, timeoutMs: number, what: string) {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`Timed out after ${timeoutMs} ms waiting for ${what}.`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

function paiErrorOf(action: () => unknown): PaiError {
  try {
    action();
  } catch (error) {
    if (PaiError.isInstance(error)) return error;
    throw error;
  }
  throw new Error("expected a PaiError");
}

async function rejectionOf(promise: Promise<unknown>): Promise<PaiError> {
  const error = await promise.then(
    () => {
      throw new Error("expected a rejection");
    },
    (reason: unknown) => reason,
  );
  if (!PaiError.isInstance(error)) throw error;
  return error;
}

describe("bullMqDispatch options", () => {
  const invalidOptions: Array<[string, Partial<BullMqDispatchOptions>]> = [
    ["no connection", { connection: undefined as never }],
    ["a connection URL of another scheme", { connection: "http://user:secret@host:6379" }],
    ["a connection that is not a URL", { connection: "localhost:6379" }],
    ["ioredis options with keyPrefix", { connection: { host: "127.0.0.1", keyPrefix: "app:" } }],
    ["a queue name with ':'", { queue: "pai:dispatch" }],
    ["an empty queue name", { queue: "" }],
    ["an empty prefix", { prefix: "" }],
    ["a stalled interval under 100 ms", { stalledIntervalMs: 50 }],
    ["a fractional stalled interval", { stalledIntervalMs: 1000.5 }],
    ["a retry cap under the first delay", { retry: { initialDelayMs: 1000, maxDelayMs: 10 } }],
    ["a zero first retry delay", { retry: { initialDelayMs: 0 } }],
    ["removeOnComplete without age or count", { removeOnComplete: {} as never }],
    ["a negative removeOnFail", { removeOnFail: -1 }],
    ["an onError that is not a function", { onError: "log" as never }],
  ];

  it.each(invalidOptions)("rejects %s with INVALID_DEFINITION", (_, override) => {
    const error = paiErrorOf(() => bullMqDispatch({ connection: URL_, ...override }));
    expect(error.code).toBe("INVALID_DEFINITION");
    expect(error.message).toMatch(/^bullMqDispatch: /);
    expect(error.message).not.toContain("secret");
  });

  it("rejects a client with an ioredis keyPrefix", () => {
    const client = new Redis(URL_, { lazyConnect: true, keyPrefix: "app:" });
    try {
      expect(paiErrorOf(() => bullMqDispatch({ connection: client })).message).toContain("`prefix`");
    } finally {
      client.disconnect();
    }
  });

  it("names itself bullmq and opens nothing until used", async () => {
    const dispatch = bullMqDispatch({ connection: "redis://127.0.0.1:1" });
    expect(dispatch.specificationVersion).toBe("v1");
    expect(dispatch.name).toBe("bullmq");
    expect(dispatch.inProcess).toBeUndefined();
    await dispatch.close();
  });

  it("refuses to run workers on a client without maxRetriesPerRequest: null", async () => {
    const client = new Redis(URL_, { lazyConnect: true });
    const dispatch = bullMqDispatch({ connection: client });
    try {
      const error = await rejectionOf(dispatch.work(async () => {}, { concurrency: 1 }));
      expect(error.code).toBe("INVALID_DEFINITION");
      expect(error.message).toContain("maxRetriesPerRequest: null");
    } finally {
      await dispatch.close();
      client.disconnect();
    }
  });

  it("validates concurrency", async () => {
    const dispatch = bullMqDispatch({ connection: "redis://127.0.0.1:1" });
    for (const concurrency of [0, 1.5, Number.NaN, undefined]) {
      const error = await rejectionOf(dispatch.work(async () => {}, { concurrency } as never));
      expect(error.code).toBe("INVALID_DEFINITION");
    }
    await dispatch.close();
  });

  it("rejects malformed jobs and notBefore values before touching Redis", async () => {
    const dispatch = bullMqDispatch({ connection: "redis://127.0.0.1:1" });
    const missingRunId = { kind: "run", threadId: "t", scopeKey: "s" } as unknown as DispatchJob;
    expect((await rejectionOf(dispatch.send(missingRunId))).code).toBe("INVALID_INPUT");
    const notBefore = { notBefore: "tomorrow" };
    expect((await rejectionOf(dispatch.send(run(1), notBefore))).code).toBe("INVALID_INPUT");
    await dispatch.close();
  });

  it("refuses work after close", async () => {
    const dispatch = bullMqDispatch({ connection: "redis://127.0.0.1:1" });
    await dispatch.close();
    await dispatch.close();
    expect((await rejectionOf(dispatch.send(run(1)))).message).toContain("closed");
    expect((await rejectionOf(dispatch.work(async () => {}, { concurrency: 1 }))).message).toContain(
      "closed",
    );
  });
});

describe.skipIf(redis === null)("bullMqDispatch on Redis", () => {
  const opened: Array<{ close(): Promise<void> }> = [];
  const open = (options: Partial<BullMqDispatchOptions> & { queue: string }): DispatchV1 => {
    const dispatch = bullMqDispatch({ connection: redis!.url, prefix: redis!.prefix, ...options });
    opened.push(dispatch);
    return dispatch;
  };
  const rawQueue = (name: string) => {
    const queue = new Queue(name, { connection: { url: redis!.url }, prefix: redis!.prefix });
    opened.push(queue);
    return queue;
  };

  afterEach(async () => {
    for (const closable of opened.splice(0).reverse()) await closable.close();
  });
  afterAll(async () => {
    await redis?.dispose();
  });

  it("acknowledges and reports jobs of the wrong shape, never handing them to the handler", async () => {
    const name = queueName();
    const queue = rawQueue(name);
    const bad = [
      await queue.add("run", { kind: "run", threadId: "t", scopeKey: "s" }),
      await queue.add("x", { kind: "explode", threadId: "t", scopeKey: "s" }),
      await queue.add("x", "not an object"),
    ];
    const errors: unknown[] = [];
    const seen: DispatchJob[] = [];
    const dispatch = open({ queue: name, onError: (error) => errors.push(error) });
    const worker = await dispatch.work(async (job) => void seen.push(job), { concurrency: 2 });
    await dispatch.send(run(1));
    await until(() => seen.length >= 1 && errors.length >= 3, 10_000, "the valid job and three reports");
    await worker.stop();

    expect(seen).toEqual([run(1)]);
    expect(errors).toHaveLength(3);
    for (const error of errors) {
      expect(PaiError.isInstance(error) && error.code).toBe("INVALID_INPUT");
    }
    const reported = errors.map((error) => (error as PaiError).details?.jobId).sort();
    expect(reported).toEqual(bad.map((job) => job.id).sort());
    for (const job of bad) expect(await queue.getJobState(job.id!)).toBe("completed");
  });

  it("keeps retrying a job whose handler keeps failing", async () => {
    const dispatch = open({ queue: queueName(), retry: { initialDelayMs: 1, maxDelayMs: 20 } });
    let attempts = 0;
    const worker = await dispatch.work(
      async () => {
        attempts++;
        if (attempts <= 12) throw new Error(`attempt ${attempts} fails`);
      },
      { concurrency: 1 },
    );
    await dispatch.send(run(2));
    await until(() => attempts >= 13, 15_000, "the 13th delivery");
    await worker.stop();
    expect(attempts).toBe(13);
  });

  it("delivers again whatever a handler throws, even errors BullMQ gives a meaning", async () => {
    const dispatch = open({ queue: queueName(), retry: { initialDelayMs: 1, maxDelayMs: 5 } });
    const unrecoverable = Object.assign(new Error("looks final"), { name: "UnrecoverableError" });
    const delayed = Object.assign(new Error("looks moved"), { name: "DelayedError" });
    const throws: unknown[] = [undefined, "a string", unrecoverable, delayed];
    let attempts = 0;
    const worker = await dispatch.work(
      async () => {
        attempts++;
        if (attempts <= throws.length) throw throws[attempts - 1];
      },
      { concurrency: 1 },
    );
    await dispatch.send(run(4));
    await until(() => attempts > throws.length, 10_000, "a delivery after every kind of throw");
    await worker.stop();
    expect(attempts).toBe(throws.length + 1);
  });

  it("removes finished jobs from Redis as configured", async () => {
    const name = queueName();
    const queue = rawQueue(name);
    const dispatch = open({ queue: name, removeOnComplete: true });
    let handled = 0;
    const worker = await dispatch.work(async () => void handled++, { concurrency: 2 });
    for (let index = 0; index < 5; index++) await dispatch.send(run(index));
    await until(
      async () => {
        const counts = await queue.getJobCounts("wait", "active", "delayed");
        return handled >= 5 && counts.wait + counts.active + counts.delayed === 0;
      },
      10_000,
      "five finished jobs",
    );
    await worker.stop();
    expect((await queue.getJobCounts("completed")).completed).toBe(0);
  });

  it("delays a job by notBefore and leaves a client it was given open", async () => {
    const client = new Redis(redis!.url, { maxRetriesPerRequest: null });
    try {
      const dispatch = open({ connection: client, queue: queueName() });
      const seen: number[] = [];
      const worker = await dispatch.work(async () => void seen.push(Date.now()), { concurrency: 1 });
      const notBefore = Date.now() + 700;
      await dispatch.send(run(3), { notBefore: new Date(notBefore).toISOString() });
      await until(() => seen.length >= 1, 10_000, "the delayed job");
      expect(seen[0]).toBeGreaterThanOrEqual(notBefore);
      await worker.stop();
      await dispatch.close?.();
      expect(client.status).toBe("ready");
      expect(await client.ping()).toBe("PONG");
    } finally {
      client.disconnect();
    }
  });
});
