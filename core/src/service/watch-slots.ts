import { PaiError } from "../errors/pai-error.js";
import type { Scope } from "./identity.js";

const DEFAULT_MAX_WATCHES_PER_USER = 32;

/**
 * Open watches per user of this process. A watch holds a subscription, a queue and, over HTTP, a
 * connection for as long as the client keeps it, so without a bound one caller could hold any
 * number of them. A slot is taken when a watch starts and given back when it ends, however it ends.
 */
export class WatchSlots {
  readonly #open = new Map<string, number>();
  readonly max: number;

  constructor(max: number | undefined) {
    this.max = maxWatchesPerUser(max);
  }

  /** Takes a slot for the scope's user, or refuses with TOO_MANY_REQUESTS; returns its release. */
  take(scope: Scope): () => void {
    // A NUL cannot occur in a scope key (storage refuses it), so the two parts never run together.
    const key = `${scope.scopeKey}\u0000${scope.userKey ?? ""}`;
    const open = this.#open.get(key) ?? 0;
    if (open >= this.max) {
      throw new PaiError(
        "TOO_MANY_REQUESTS",
        `This user already holds ${open} open watches, the most this server allows (maxWatchesPerUser). Close one (abort its signal, or unsubscribe) before opening another.`,
      );
    }
    this.#open.set(key, open + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const left = (this.#open.get(key) ?? 1) - 1;
      if (left <= 0) this.#open.delete(key);
      else this.#open.set(key, left);
    };
  }

  /** Open watches of one user (tests). */
  openOf(scope: Scope): number {
    return this.#open.get(`${scope.scopeKey}\u0000${scope.userKey ?? ""}`) ?? 0;
  }
}

function maxWatchesPerUser(value: number | undefined): number {
  if (value === undefined) return DEFAULT_MAX_WATCHES_PER_USER;
  if (value === Number.POSITIVE_INFINITY || (Number.isInteger(value) && value >= 1)) return value;
  throw new PaiError(
    "INVALID_DEFINITION",
    `maxWatchesPerUser must be a whole number of at least 1, or Infinity, got ${String(value)}.`,
  );
}
