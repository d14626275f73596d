import { PaiError } from "../errors/pai-error.js";
import type { StorageV1 } from "../ports/storage.js";
import { KeyedMutex } from "./keyed-mutex.js";

/** Thrown by a hold that may not wait (a dispatched job) when another instance holds the run. */
export class LeaseBusyError extends Error {
  constructor(readonly runId: string) {
    super(`Run ${runId} is being driven by another instance.`);
    this.name = "LeaseBusyError";
  }
}

/** Thrown when this process learns another instance took over a run it was driving. */
export class LeaseLostError extends Error {
  constructor(readonly runId: string) {
    super(`The lease of run ${runId} was taken over by another instance; this process stops driving it.`);
    this.name = "LeaseLostError";
  }
}

type Lease = {
  count: number;
  threadId: string;
  timer: ReturnType<typeof setInterval>;
  /** Store-clock time (ms) of the last successful acquire or renewal. */
  renewedAt: number;
  lost: boolean;
  /** The run ended or parked: its lease needs no release write (see `releaseNotNeeded`). */
  releaseNotNeeded: boolean;
};

/**
 * Leases of the runs this process drives. A lease is taken once per run (reference
 * counted across the driver and resumed executions), renewed by a heartbeat, and checked
 * before every write: if the last renewal is older than most of the lease, the check renews
 * synchronously, so a process that stalled past its lease never writes over the instance
 * that adopted the run.
 */
export class RunLeases {
  readonly #leases = new Map<string, Lease>();
  readonly #mutex = new KeyedMutex();
  /** Leases a commit already took (store-clock ms), for the next `hold` to use without a round trip. */
  readonly #taken = new Map<string, number>();

  constructor(
    readonly storage: StorageV1,
    readonly clock: () => Date,
    readonly owner: string,
    readonly leaseMs: number,
    readonly onLost: (runId: string) => void,
    readonly onError: (error: unknown, threadId: string, runId: string) => void,
  ) {}

  async #renew(threadId: string, runId: string): Promise<boolean> {
    const now = this.clock();
    return this.storage.acquireRunLease({
      threadId,
      runId,
      owner: this.owner,
      now: now.toISOString(),
      expiresAt: new Date(now.getTime() + this.leaseMs).toISOString(),
    });
  }

  #markLost(runId: string, lease: Lease): void {
    if (lease.lost) return;
    lease.lost = true;
    clearInterval(lease.timer);
    this.onLost(runId);
  }

  /** The lease a commit takes for a run this process creates and is about to drive. */
  leaseForCommit(runId: string): { runId: string; owner: string; expiresAt: string } {
    return {
      runId,
      owner: this.owner,
      expiresAt: new Date(this.clock().getTime() + this.leaseMs).toISOString(),
    };
  }

  /** Records that a commit took the run's lease (see `leaseForCommit`). */
  taken(lease: { runId: string; expiresAt: string }): void {
    this.#taken.set(lease.runId, Date.parse(lease.expiresAt) - this.leaseMs);
  }

  /**
   * Takes (or joins) the lease of a run; waits up to two lease lengths for another holder, or
   * with `wait: false` throws `LeaseBusyError` at once (the holder drives the run, and if it dies
   * the expired lease makes the run recoverable).
   */
  async hold(
    threadId: string,
    runId: string,
    options: { wait?: boolean } = {},
  ): Promise<() => Promise<void>> {
    await this.#mutex.run(runId, async () => {
      const existing = this.#leases.get(runId);
      if (existing && !existing.lost) {
        existing.count++;
        return;
      }
      const takenAt = this.#taken.get(runId);
      this.#taken.delete(runId);
      // A lease taken by a commit is used while most of it is left; otherwise it is renewed.
      const committed =
        takenAt !== undefined && this.clock().getTime() - takenAt < this.leaseMs * 0.6 ? takenAt : undefined;
      const deadline = Date.now() + this.leaseMs * 2;
      while (committed === undefined && !(await this.#renew(threadId, runId))) {
        if (options.wait === false) throw new LeaseBusyError(runId);
        if (Date.now() > deadline) {
          throw new PaiError(
            "CONFLICT",
            `Run ${runId} is being driven by another server; retry once it finishes or its lease expires.`,
          );
        }
        await new Promise((resolve) => setTimeout(resolve, Math.min(250, this.leaseMs / 4)));
      }
      const lease: Lease = {
        count: 1,
        threadId,
        renewedAt: committed ?? this.clock().getTime(),
        lost: false,
        releaseNotNeeded: false,
        timer: setInterval(
          () => {
            const startedAt = this.clock().getTime();
            this.#renew(threadId, runId).then(
              (held) => {
                if (held) lease.renewedAt = startedAt;
                else this.#markLost(runId, lease);
              },
              (error) => this.onError(error, threadId, runId),
            );
          },
          Math.max(50, Math.floor(this.leaseMs / 3)),
        ),
      };
      lease.timer.unref?.();
      this.#leases.set(runId, lease);
    });
    let released = false;
    return async () => {
      if (released) return;
      released = true;
      await this.#mutex.run(runId, async () => {
        const lease = this.#leases.get(runId);
        if (!lease) return;
        lease.count--;
        if (lease.count > 0) return;
        clearInterval(lease.timer);
        this.#leases.delete(runId);
        if (lease.lost || lease.releaseNotNeeded) return;
        await this.storage
          .releaseRunLease({ threadId, runId, owner: this.owner })
          .catch((error) => this.onError(error, threadId, runId));
      });
    };
  }

  /**
   * Records that a run this process holds ended or parked, so dropping its lease needs no
   * storage write (one round trip per run). Recovery adopts only queued or running runs, and
   * the commit that wakes a parked run takes its lease whatever lease it still has.
   */
  releaseNotNeeded(runId: string): void {
    const lease = this.#leases.get(runId);
    if (lease) lease.releaseNotNeeded = true;
  }

  /** Throws `LeaseLostError` unless this process still holds the run's lease. */
  async assert(runId: string): Promise<void> {
    const lease = this.#leases.get(runId);
    if (!lease || lease.lost) throw new LeaseLostError(runId);
    const age = this.clock().getTime() - lease.renewedAt;
    if (age < this.leaseMs * 0.6) return;
    const startedAt = this.clock().getTime();
    if (await this.#renew(lease.threadId, runId)) {
      lease.renewedAt = startedAt;
      return;
    }
    this.#markLost(runId, lease);
    throw new LeaseLostError(runId);
  }

  async releaseAll(): Promise<void> {
    this.#taken.clear();
    for (const [runId, lease] of this.#leases) {
      clearInterval(lease.timer);
      if (!lease.lost) {
        await this.storage
          .releaseRunLease({ threadId: lease.threadId, runId, owner: this.owner })
          .catch(() => undefined);
      }
    }
    this.#leases.clear();
  }
}
