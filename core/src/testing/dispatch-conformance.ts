import { afterEach, describe, expect, it } from "vitest";
import type { DispatchJob, DispatchV1, DispatchWorkerV1 } from "../ports/dispatch.js";

/** Options for `runDispatchConformance`. */
export type DispatchConformanceOptions = {
  /** Shown in the suite title, e.g. "pg-boss (Postgres)". */
  name: string;
  /**
   * Makes a dispatch on `namespace` (a queue name or prefix unique to the test). Two calls with
   * the same namespace must reach the same jobs: the durability test stands for a restart that way.
   */
  create: (namespace: string) => DispatchV1 | Promise<DispatchV1>;
  /** Jobs survive the dispatch object (false only for the in-process dispatch). Default true. */
  durable?: boolean;
  /** Skips the whole suite (a local run without the backing server; never under CI). */
  skip?: boolean;
  /** Longest wait for a delivery in ms. Default 15 s. */
  deliveryTimeoutMs?: number;
};

function runJob(index: number, scopeKey = "scope-a"): DispatchJob {
  return { kind: "run", threadId: `thread-${index}`, runId: `run-${index}`, scopeKey };
}

async function until(check: () => boolean, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`Timed out after ${timeoutMs} ms waiting for ${what}.`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** The dispatch port's contract, as vitest suites; every dispatch adapter runs it. */
export function runDispatchConformance(options: DispatchConformanceOptions): void {
  const timeout = options.deliveryTimeoutMs ?? 15_000;
  const durable = options.durable ?? true;
  describe.skipIf(options.skip ?? false)(`dispatch conformance: ${options.name}`, () => {
    const opened: DispatchV1[] = [];
    const workers: DispatchWorkerV1[] = [];
    const open = async (namespace: string) => {
      const dispatch = await options.create(namespace);
      opened.push(dispatch);
      return dispatch;
    };
    const namespace = () => `pai_conf_${globalThis.crypto.randomUUID().replaceAll("-", "").slice(0, 16)}`;

    afterEach(async () => {
      for (const worker of workers.splice(0)) await worker.stop();
      for (const dispatch of opened.splice(0)) await dispatch.close?.();
    });

    it("declares version v1 and a name", async () => {
      const dispatch = await open(namespace());
      expect(dispatch.specificationVersion).toBe("v1");
      expect(typeof dispatch.name).toBe("string");
    });

    it("delivers a sent job to a worker, unchanged", { timeout: timeout * 2 }, async () => {
      const dispatch = await open(namespace());
      const seen: DispatchJob[] = [];
      workers.push(await dispatch.work(async (job) => void seen.push(job), { concurrency: 1 }));
      const wake: DispatchJob = {
        kind: "wake",
        threadId: "t-1",
        scopeKey: "s",
        at: new Date().toISOString(),
      };
      await dispatch.send(runJob(1));
      await dispatch.send(wake);
      await until(() => seen.length >= 2, timeout, "two deliveries");
      expect(seen).toEqual(expect.arrayContaining([runJob(1), wake]));
    });

    it("never delivers a job before its notBefore", { timeout: timeout * 2 }, async () => {
      const dispatch = await open(namespace());
      const seen: Array<{ job: DispatchJob; at: number }> = [];
      workers.push(
        await dispatch.work(async (job) => void seen.push({ job, at: Date.now() }), { concurrency: 1 }),
      );
      const notBefore = Date.now() + 1_500;
      await dispatch.send(runJob(2), { notBefore: new Date(notBefore).toISOString() });
      await dispatch.send(runJob(3));
      await until(() => seen.length >= 2, timeout, "the delayed job");
      const delayed = seen.find((entry) => entry.job.kind === "run" && entry.job.runId === "run-2");
      expect(delayed).toBeDefined();
      expect(delayed!.at).toBeGreaterThanOrEqual(notBefore);
      expect(seen[0]!.job).toEqual(runJob(3));
    });

    it("keeps at most `concurrency` handlers in flight", { timeout: timeout * 2 }, async () => {
      const dispatch = await open(namespace());
      let inFlight = 0;
      let most = 0;
      let done = 0;
      workers.push(
        await dispatch.work(
          async () => {
            inFlight++;
            most = Math.max(most, inFlight);
            await new Promise((resolve) => setTimeout(resolve, 150));
            inFlight--;
            done++;
          },
          { concurrency: 2 },
        ),
      );
      for (let index = 0; index < 6; index++) await dispatch.send(runJob(index));
      await until(() => done >= 6, timeout, "six jobs");
      expect(most).toBeLessThanOrEqual(2);
      expect(most).toBe(2);
    });

    it("delivers a job again when its handler throws", { timeout: timeout * 3 }, async () => {
      const dispatch = await open(namespace());
      let attempts = 0;
      workers.push(
        await dispatch.work(
          async () => {
            attempts++;
            if (attempts === 1) throw new Error("first attempt fails");
          },
          { concurrency: 1 },
        ),
      );
      await dispatch.send(runJob(4));
      await until(() => attempts >= 2, timeout * 2, "a second delivery");
      expect(attempts).toBeGreaterThanOrEqual(2);
    });

    it("stop waits for handlers in flight and takes no new jobs", { timeout: timeout * 2 }, async () => {
      const dispatch = await open(namespace());
      let finished = 0;
      let started = 0;
      const worker = await dispatch.work(
        async () => {
          started++;
          await new Promise((resolve) => setTimeout(resolve, 300));
          finished++;
        },
        { concurrency: 1 },
      );
      await dispatch.send(runJob(5));
      await until(() => started >= 1, timeout, "the first delivery");
      await worker.stop();
      expect(finished).toBe(started);
      const before = started;
      await dispatch.send(runJob(6));
      await new Promise((resolve) => setTimeout(resolve, 1_000));
      expect(started).toBe(before);
      // A new worker takes the job the stopped one left.
      const seen: DispatchJob[] = [];
      workers.push(await dispatch.work(async (job) => void seen.push(job), { concurrency: 1 }));
      await until(() => seen.length >= 1, timeout, "the job sent after stop");
      expect(seen[0]).toEqual(runJob(6));
    });

    // Registered only for durable engines: the in-process dispatch loses its jobs with its process
    // by design (storage is what survives a restart there).
    (durable ? it : () => undefined)(
      "keeps jobs sent before any worker ran, across a new dispatch object",
      { timeout: timeout * 2 },
      async () => {
        const queue = namespace();
        const first = await open(queue);
        await first.send(runJob(7));
        await first.send(runJob(8), { notBefore: new Date(Date.now() + 500).toISOString() });
        await first.close?.();
        opened.splice(opened.indexOf(first), 1);
        const second = await open(queue);
        const seen: DispatchJob[] = [];
        workers.push(await second.work(async (job) => void seen.push(job), { concurrency: 2 }));
        await until(() => seen.length >= 2, timeout, "both jobs after the restart");
        expect(seen).toEqual(expect.arrayContaining([runJob(7), runJob(8)]));
      },
    );

    it("delivers every one of 200 jobs at least once across two workers", {
      timeout: timeout * 4,
    }, async () => {
      const queue = namespace();
      const producer = await open(queue);
      const other = durable ? await open(queue) : producer;
      const seen = new Set<string>();
      const handler = async (job: DispatchJob) => {
        if (job.kind === "run") seen.add(job.runId);
      };
      workers.push(await producer.work(handler, { concurrency: 4 }));
      workers.push(await other.work(handler, { concurrency: 4 }));
      await Promise.all(
        Array.from({ length: 200 }, (_, index) => producer.send(runJob(1000 + index, `scope-${index % 5}`))),
      );
      await until(() => seen.size >= 200, timeout * 3, "200 distinct jobs");
      expect(seen.size).toBe(200);
    });
  });
}
