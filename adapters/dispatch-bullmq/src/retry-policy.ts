/** Delays between deliveries of a job whose handler threw. */
export type RetryPolicy = { initialDelayMs: number; maxDelayMs: number };

export const DEFAULT_RETRY: RetryPolicy = { initialDelayMs: 500, maxDelayMs: 30_000 };

/**
 * BullMQ fails a job for good once it has used `attempts`, or stalled (lost its worker) more
 * than `maxStalledCount` times. A dispatch job must never be dropped that way: a run whose job
 * is gone waits for recovery to find it, and storage with the runtime's leases already makes
 * every extra delivery harmless. So both limits are set out of reach (2^31 - 1 retries at the
 * longest delay would take decades) and the backoff below keeps an endless retry cheap.
 */
export const UNLIMITED = 2 ** 31 - 1;

/** Name of the backoff strategy in the job options; only this adapter's workers know it. */
export const BACKOFF_TYPE = "pai-capped-exponential";

/**
 * Delay before retry number `attemptsMade` (1 for the first retry): exponential, capped, and
 * drawn from the upper half of that value so jobs that failed together (a database outage)
 * do not all come back in the same instant.
 */
export function retryDelayMs(attemptsMade: number, policy: RetryPolicy): number {
  const exponent = Math.min(Math.max(attemptsMade - 1, 0), 30);
  const ceiling = Math.min(policy.initialDelayMs * 2 ** exponent, policy.maxDelayMs);
  return Math.max(1, Math.round(ceiling / 2 + (Math.random() * ceiling) / 2));
}
