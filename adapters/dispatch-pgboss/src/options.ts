import { PaiError } from "@pai/core";
import type { PgBoss } from "pg-boss";

/** Settings shared by both ways of reaching Postgres. */
export type PgBossDispatchSettings = {
  /**
   * The pg-boss queue jobs go through (default `"pai-dispatch"`). Processes that share a queue
   * share its jobs. Letters, digits, `_`, `-`, `.` and `/` only, as pg-boss requires.
   */
  queue?: string;
  /**
   * Seconds between a worker's heartbeats on the jobs it holds (default 30, at least 10). A job whose
   * worker died (a crash, a SIGKILL, a lost machine) stops heartbeating, and pg-boss's supervisor
   * hands it back for delivery once its last heartbeat is this old.
   */
  heartbeatSeconds?: number;
  /**
   * Longest one delivery may run, in seconds (default 900, at most 86400). Past it pg-boss hands
   * the job back for delivery again even though its handler is still running: the bound for a
   * handler that hangs in a process that is otherwise alive (and still heartbeating).
   */
  expireInSeconds?: number;
  /**
   * Seconds before the first redelivery of a job whose handler threw (default 1). Later ones back
   * off exponentially with jitter, up to `retryDelayMax`.
   */
  retryDelay?: number;
  /** Longest wait between two deliveries of a failing job, in seconds (default 60). */
  retryDelayMax?: number;
  /**
   * Deliveries after the first before pg-boss gives a job up as failed (default 100000: with
   * `retryDelayMax` 60 s, longer than pg-boss keeps a queued job). Failures include handlers that
   * threw and jobs taken back from dead or hung workers.
   */
  retryLimit?: number;
  /**
   * Seconds an idle worker waits between polls (default 1, at least 0.5). Polling is the floor: an
   * instance started with pg-boss's `useListenNotify` (the dispatch's own one is) wakes its workers
   * as soon as a job is sent.
   */
  pollingIntervalSeconds?: number;
  /**
   * Problems the dispatch handled itself: a job whose payload is not a dispatch job (acknowledged
   * and dropped, never handed to the handler), and `error` events of the PgBoss instance the
   * dispatch created. Never called for a handler that throws (that job is delivered again).
   */
  onError?: (error: unknown) => void;
};

/** The dispatch creates, starts and (on `close`) stops its own PgBoss. */
export type PgBossDispatchConnectionOptions = PgBossDispatchSettings & {
  /** Postgres connection string, e.g. `postgres://user:password@host:5432/db`. */
  connectionString: string;
  /** The schema pg-boss installs its tables in (pg-boss's default, `pgboss`, when absent). */
  schema?: string;
  boss?: never;
};

/** The dispatch uses a PgBoss instance the caller started and owns (`close` leaves it running). */
export type PgBossDispatchInstanceOptions = PgBossDispatchSettings & {
  /** A started `PgBoss`. Its `error` events are the caller's to listen to. */
  boss: PgBoss;
  connectionString?: never;
  schema?: never;
};

/** Options of `pgBossDispatch`: `{ connectionString }` or `{ boss }`, plus the shared settings. */
export type PgBossDispatchOptions = PgBossDispatchConnectionOptions | PgBossDispatchInstanceOptions;

/** The settings with their defaults applied. */
export type ResolvedSettings = {
  queue: string;
  heartbeatSeconds: number;
  expireInSeconds: number;
  retryDelay: number;
  retryDelayMax: number;
  retryLimit: number;
  pollingIntervalSeconds: number;
  onError: (error: unknown) => void;
};

export const DEFAULT_QUEUE = "pai-dispatch";

// pg-boss's own rule for queue names, checked here so a bad name fails at construction.
const QUEUE_NAME = /^[A-Za-z0-9_.\-/]+$/;
// pg-boss caps every duration at a day and integer columns at 2^31 - 1.
const DAY_SECONDS = 86_400;
const MAX_INT = 2 ** 31 - 1;

function invalid(message: string): PaiError {
  return new PaiError("INVALID_DEFINITION", `pgBossDispatch: ${message}`);
}

function integerSetting(
  value: number | undefined,
  name: string,
  fallback: number,
  min: number,
  max: number,
): number {
  if (value === undefined) return fallback;
  if (!Number.isInteger(value) || value < min || value > max) {
    throw invalid(`\`${name}\` must be a whole number from ${min} to ${max} (got ${String(value)}).`);
  }
  return value;
}

/** Checks the options up front, so a typo fails at startup rather than on the first job. */
export function resolveSettings(options: PgBossDispatchOptions): ResolvedSettings {
  if (typeof options !== "object" || options === null) {
    throw invalid("pass `{ connectionString }` or `{ boss }`.");
  }
  const hasBoss = options.boss !== undefined;
  const hasConnection = options.connectionString !== undefined;
  if (hasBoss === hasConnection) {
    throw invalid("pass exactly one of `connectionString` (the dispatch runs its own pg-boss) and `boss`.");
  }
  if (hasConnection && (typeof options.connectionString !== "string" || options.connectionString === "")) {
    throw invalid("`connectionString` must be a non-empty string.");
  }
  if (hasBoss && (typeof options.boss !== "object" || options.boss === null)) {
    throw invalid("`boss` must be a started PgBoss instance.");
  }
  if (hasBoss && options.schema !== undefined) {
    throw invalid("`schema` applies only with `connectionString`; a PgBoss passed in keeps its own.");
  }
  if (options.schema !== undefined && (typeof options.schema !== "string" || options.schema === "")) {
    throw invalid("`schema` must be a non-empty string.");
  }
  const queue = options.queue ?? DEFAULT_QUEUE;
  if (typeof queue !== "string" || !QUEUE_NAME.test(queue)) {
    throw invalid(
      "`queue` must be a non-empty name of letters, digits, underscores, hyphens, periods or forward slashes.",
    );
  }
  const retryDelay = integerSetting(options.retryDelay, "retryDelay", 1, 1, DAY_SECONDS);
  const retryDelayMax = integerSetting(options.retryDelayMax, "retryDelayMax", 60, 1, DAY_SECONDS);
  if (retryDelayMax < retryDelay) throw invalid("`retryDelayMax` must be at least `retryDelay`.");
  const polling = options.pollingIntervalSeconds ?? 1;
  if (typeof polling !== "number" || !Number.isFinite(polling) || polling < 0.5 || polling > 3_600) {
    throw invalid("`pollingIntervalSeconds` must be a number from 0.5 to 3600.");
  }
  if (options.onError !== undefined && typeof options.onError !== "function") {
    throw invalid("`onError` must be a function.");
  }
  return {
    queue,
    heartbeatSeconds: integerSetting(options.heartbeatSeconds, "heartbeatSeconds", 30, 10, DAY_SECONDS),
    expireInSeconds: integerSetting(options.expireInSeconds, "expireInSeconds", 900, 1, DAY_SECONDS),
    retryDelay,
    retryDelayMax,
    retryLimit: integerSetting(options.retryLimit, "retryLimit", 100_000, 0, MAX_INT),
    pollingIntervalSeconds: polling,
    onError: options.onError ?? (() => undefined),
  };
}
