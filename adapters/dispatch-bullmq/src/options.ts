import { PaiError } from "@pai/core";
import { type ConnectionOptions, isRedisInstance, type KeepJobs } from "bullmq";
import { DEFAULT_RETRY, type RetryPolicy } from "./retry-policy.js";

/** Which finished jobs BullMQ keeps in Redis: `true` removes at once, a number keeps that many. */
export type BullMqKeepJobs = boolean | number | KeepJobs;

/** Options for `bullMqDispatch`. */
export type BullMqDispatchOptions = {
  /**
   * Where Redis is: a `redis://` or `rediss://` URL, ioredis options (BullMQ then opens and
   * closes its own connections), or a client you created (an ioredis `Redis` or `Cluster`).
   * A client you pass is never closed by the dispatch; to run workers on it, create it with
   * `maxRetriesPerRequest: null`, as BullMQ requires of worker connections.
   */
  connection: string | ConnectionOptions;
  /** BullMQ queue name shared by every process of one deployment. Default `"pai-dispatch"`. */
  queue?: string;
  /** Prefix of every Redis key of the queue (BullMQ's `prefix`, default `"bull"`). */
  prefix?: string;
  /**
   * Redelivery after a handler throws: the first retry waits about `initialDelayMs` (default
   * 500), each further one twice as long, up to `maxDelayMs` (default 30 000); each wait is
   * drawn between half and all of that. Jobs are retried without a limit on attempts.
   */
  retry?: { initialDelayMs?: number; maxDelayMs?: number };
  /**
   * How often workers look for jobs whose worker died, in ms; also the lifetime of a job's
   * lock, which a live worker renews at half of it. A crashed worker's jobs are delivered
   * again within about three intervals. Default 30 000.
   */
  stalledIntervalMs?: number;
  /** Completed jobs kept in Redis. Default: the last hour, at most 1000. */
  removeOnComplete?: BullMqKeepJobs;
  /** Failed jobs kept in Redis (rare: jobs are retried without limit). Default: 7 days, at most 1000. */
  removeOnFail?: BullMqKeepJobs;
  /**
   * Told about jobs dropped for an invalid shape and about errors BullMQ reports (lost
   * connections, failed lock renewals). A handler's own failures are not reported here.
   */
  onError?: (error: unknown) => void;
};

/** The options after validation, with defaults filled in. */
export type ResolvedOptions = {
  connection: ConnectionOptions;
  queue: string;
  prefix: string | undefined;
  retry: RetryPolicy;
  stalledIntervalMs: number;
  removeOnComplete: BullMqKeepJobs;
  removeOnFail: BullMqKeepJobs;
  onError: (error: unknown) => void;
};

const DEFAULT_QUEUE = "pai-dispatch";
const DEFAULT_STALLED_INTERVAL_MS = 30_000;
const MIN_STALLED_INTERVAL_MS = 100;
const MAX_DELAY_MS = 24 * 60 * 60 * 1000;
const MAX_QUEUE_NAME = 200;

const invalid = (message: string) => new PaiError("INVALID_DEFINITION", `bullMqDispatch: ${message}`);

function isKeepJobs(value: unknown): value is BullMqKeepJobs {
  if (typeof value === "boolean") return true;
  if (typeof value === "number") return Number.isSafeInteger(value) && value >= 0;
  if (typeof value !== "object" || value === null) return false;
  const { age, count } = value as { age?: unknown; count?: unknown };
  const ok = (n: unknown) => n === undefined || (typeof n === "number" && Number.isFinite(n) && n >= 0);
  return (age !== undefined || count !== undefined) && ok(age) && ok(count);
}

function integerIn(value: unknown, min: number, max: number): value is number {
  return Number.isSafeInteger(value) && (value as number) >= min && (value as number) <= max;
}

/** The options a client was created with (a Cluster keeps per-node options apart). */
function clientOptions(client: object): Record<string, unknown> {
  const options = (client as { options?: Record<string, unknown> }).options ?? {};
  const perNode = (client as { isCluster?: boolean }).isCluster ? options.redisOptions : undefined;
  return (perNode as Record<string, unknown> | undefined) ?? options;
}

function resolveConnection(connection: unknown): ConnectionOptions {
  if (typeof connection === "string") {
    // The URL may carry a password, so messages never repeat it.
    let protocol: string | undefined;
    try {
      protocol = new URL(connection).protocol;
    } catch {}
    if (protocol !== "redis:" && protocol !== "rediss:") {
      throw invalid("`connection` must be a redis:// or rediss:// URL, ioredis options or a Redis client.");
    }
    return { url: connection };
  }
  if (typeof connection !== "object" || connection === null) {
    throw invalid("`connection` is required: a redis:// URL, ioredis options or a Redis client.");
  }
  // BullMQ builds its own key names; an ioredis keyPrefix would put them where its Lua
  // scripts do not look.
  const options = isRedisInstance(connection) ? clientOptions(connection) : (connection as object);
  if ((options as { keyPrefix?: unknown }).keyPrefix) {
    throw invalid("the Redis connection must not set ioredis `keyPrefix`; use the `prefix` option instead.");
  }
  return connection as ConnectionOptions;
}

/**
 * Workers need connections that wait out a Redis outage instead of failing commands; BullMQ
 * enforces that on a client you pass by throwing while it builds the worker, after it opened
 * a connection it then never closes, so the check runs before.
 */
export function assertWorkerConnection(connection: ConnectionOptions): void {
  if (!isRedisInstance(connection)) return;
  const retries = clientOptions(connection).maxRetriesPerRequest;
  if (retries !== null && retries !== undefined) {
    throw invalid(
      "workers need a Redis client created with `maxRetriesPerRequest: null` (BullMQ requires it); pass such a client, or a URL or options and let the dispatch open its own connections.",
    );
  }
}

export function resolveOptions(options: BullMqDispatchOptions): ResolvedOptions {
  if (typeof options !== "object" || options === null) {
    throw invalid("options are required, at least `connection`.");
  }
  const connection = resolveConnection(options.connection);

  const queue = options.queue ?? DEFAULT_QUEUE;
  if (typeof queue !== "string" || queue.length === 0 || queue.length > MAX_QUEUE_NAME) {
    throw invalid(`\`queue\` must be a non-empty string of at most ${MAX_QUEUE_NAME} characters.`);
  }
  if (queue.includes(":")) {
    throw invalid("`queue` must not contain ':' (BullMQ separates its Redis key parts with it).");
  }

  const prefix = options.prefix;
  if (prefix !== undefined && (typeof prefix !== "string" || prefix.length === 0)) {
    throw invalid("`prefix` must be a non-empty string.");
  }

  const initialDelayMs = options.retry?.initialDelayMs ?? DEFAULT_RETRY.initialDelayMs;
  const maxDelayMs = options.retry?.maxDelayMs ?? Math.max(DEFAULT_RETRY.maxDelayMs, initialDelayMs);
  if (!integerIn(initialDelayMs, 1, MAX_DELAY_MS) || !integerIn(maxDelayMs, initialDelayMs, MAX_DELAY_MS)) {
    throw invalid(
      "`retry.initialDelayMs` must be an integer from 1 ms to a day, and `retry.maxDelayMs` an integer from it to a day.",
    );
  }

  const stalledIntervalMs = options.stalledIntervalMs ?? DEFAULT_STALLED_INTERVAL_MS;
  if (!integerIn(stalledIntervalMs, MIN_STALLED_INTERVAL_MS, MAX_DELAY_MS)) {
    throw invalid(`\`stalledIntervalMs\` must be an integer from ${MIN_STALLED_INTERVAL_MS} ms to a day.`);
  }

  const removeOnComplete = options.removeOnComplete ?? { age: 60 * 60, count: 1000 };
  const removeOnFail = options.removeOnFail ?? { age: 7 * 24 * 60 * 60, count: 1000 };
  if (!isKeepJobs(removeOnComplete) || !isKeepJobs(removeOnFail)) {
    throw invalid(
      "`removeOnComplete` and `removeOnFail` take true/false, a count, or { age (seconds), count }.",
    );
  }

  if (options.onError !== undefined && typeof options.onError !== "function") {
    throw invalid("`onError` must be a function.");
  }
  const report = options.onError;
  const onError = (error: unknown) => {
    try {
      report?.(error);
    } catch {
      // A failing error reporter must not take the worker down with it.
    }
  };

  return {
    connection,
    queue,
    prefix,
    retry: { initialDelayMs, maxDelayMs },
    stalledIntervalMs,
    removeOnComplete,
    removeOnFail,
    onError,
  };
}
