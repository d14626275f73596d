// The job engines of the dispatch table: how each opens a dispatch per runtime instance, the
// settings it runs with, and how its queue is removed afterwards.
import { connect } from "node:net";
import type { DispatchV1 } from "@pai/core";
import { bullMqDispatch } from "@pai/dispatch-bullmq";
import { pgBossDispatch } from "@pai/dispatch-pgboss";
import { Queue } from "bullmq";
import { type Kysely, sql } from "kysely";
import { postgresUrl } from "./engines.ts";

export const redisUrl = process.env.PAI_TEST_REDIS_URL ?? "redis://127.0.0.1:6379";

export type DispatchEngine = {
  name: "pg-boss" | "bullmq";
  /** What the engine runs with, printed under the table. */
  settings: string;
  /** A dispatch with its own connections, as a separate process would have. */
  open(): DispatchV1;
  /** Problems the dispatches reported themselves (lost connections, dropped jobs). */
  errors: unknown[];
  /** Removes the queue's schema or keys; call once every dispatch is closed. */
  drop(): Promise<void>;
};

const benchId = () => globalThis.crypto.randomUUID().slice(0, 8);

export function pgBossEngine(db: Kysely<any>): DispatchEngine {
  const id = benchId();
  const schema = `pai_bench_${id}_boss`;
  const errors: unknown[] = [];
  // 0.5 s is the adapter's lowest polling interval; LISTEN/NOTIFY (on in a dispatch that owns its
  // PgBoss) is what wakes a worker for a new job, polling only catches what a notification missed.
  const pollingIntervalSeconds = 0.5;
  return {
    name: "pg-boss",
    settings: `pg-boss: one PgBoss per instance (connectionString, pg-boss's pool of 10), LISTEN/NOTIFY on, pollingIntervalSeconds ${pollingIntervalSeconds}, schema ${schema}`,
    errors,
    open: () =>
      pgBossDispatch({
        connectionString: postgresUrl,
        schema,
        queue: `pai-bench-${id}`,
        pollingIntervalSeconds,
        onError: (error) => errors.push(error),
      }),
    async drop() {
      await sql`drop schema if exists ${sql.id(schema)} cascade`.execute(db);
    },
  };
}

export function bullMqEngine(): DispatchEngine {
  const prefix = `pai-bench-${benchId()}`;
  const queue = "dispatch";
  const errors: unknown[] = [];
  return {
    name: "bullmq",
    settings: `bullmq: own connections per instance (from the URL), BullMQ's blocking fetch (no polling interval), other options the adapter's defaults, key prefix ${prefix}`,
    errors,
    open: () =>
      bullMqDispatch({ connection: redisUrl, queue, prefix, onError: (error) => errors.push(error) }),
    async drop() {
      const bull = new Queue(queue, { connection: { url: redisUrl }, prefix });
      await bull.obliterate({ force: true });
      await bull.close();
    },
  };
}

/**
 * Why Redis does not answer, or null when it does. A bare PING with a timeout: BullMQ itself
 * would wait for an unreachable server rather than fail.
 */
export function redisProblem(url = redisUrl): Promise<string | null> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve) => {
    const socket = connect({ host: hostname || "127.0.0.1", port: Number(port || 6379) });
    const done = (problem: string | null) => {
      socket.destroy();
      resolve(problem);
    };
    socket.setTimeout(3_000, () => done("timed out"));
    socket.on("error", (error) => done(error.message));
    socket.on("connect", () => socket.write("PING\r\n"));
    // A server that wants a password answers -NOAUTH: it is there.
    socket.on("data", (data) => done(/^(\+PONG|-NOAUTH)/.test(data.toString()) ? null : data.toString()));
  });
}
