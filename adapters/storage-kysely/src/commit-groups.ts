// Group commit on a Postgres server: when every commit slot is busy, the commits that wait go
// together in the next statement instead of one statement each.
import { PaiError, type StorageCommit } from "@pai/core";
import type { CommitPlan } from "./commit-plan.js";

/** How commits share statements (`kyselyStorage`'s `groupCommits` option). */
export type GroupCommitsOptions = {
  /**
   * Commit statements sent at once before further commits wait and go grouped (default 10,
   * `pg.Pool`'s default size). Set it to the pool's `max`: higher, and commits wait in the pool
   * one by one instead of in groups; lower, and fewer statements run side by side.
   */
  inFlight?: number;
  /** Most commits one statement carries (default 16). */
  maxCommits?: number;
};

export const DEFAULT_GROUP_COMMITS: Required<GroupCommitsOptions> = { inFlight: 10, maxCommits: 16 };

/** The most a group may carry: each commit binds a few dozen parameters, Postgres takes 65,535. */
const MAX_GROUP = 256;

/** Validates the option; `false` turns grouping off (every commit is its own statement). */
export function groupCommitsOptions(
  value: boolean | GroupCommitsOptions | undefined,
): Required<GroupCommitsOptions> | null {
  if (value === false) return null;
  if (value === undefined || value === true) return DEFAULT_GROUP_COMMITS;
  if (typeof value !== "object" || value === null) {
    throw new PaiError(
      "INVALID_DEFINITION",
      `kyselyStorage: groupCommits must be true, false or { inFlight, maxCommits }, got ${JSON.stringify(value)}.`,
    );
  }
  const resolved = { ...DEFAULT_GROUP_COMMITS, ...value };
  const check = (name: keyof GroupCommitsOptions, max: number) => {
    const count = resolved[name];
    if (!Number.isInteger(count) || count < 1 || count > max) {
      throw new PaiError(
        "INVALID_DEFINITION",
        `kyselyStorage: groupCommits.${name} must be an integer from 1 to ${max}, got ${JSON.stringify(count)}.`,
      );
    }
  };
  check("inFlight", 10_000);
  check("maxCommits", MAX_GROUP);
  return resolved;
}

/**
 * Which waiting commits the next statement carries, as indexes into `waiting` in queue order:
 * at most `maxCommits`, one per thread, and none of a thread that has a statement in flight.
 * Two commits of one thread in one statement would update its row twice (Postgres applies only
 * one), and a group never waits on a row another group of this process holds, so two groups
 * cannot lock each other's threads.
 */
export function nextGroup(
  waiting: ReadonlyArray<{ threadId: string }>,
  busyThreads: { has(threadId: string): boolean },
  maxCommits: number,
): number[] {
  const picked: number[] = [];
  const threads = new Set<string>();
  for (let index = 0; index < waiting.length && picked.length < maxCommits; index++) {
    const { threadId } = waiting[index]!;
    if (busyThreads.has(threadId) || threads.has(threadId)) continue;
    threads.add(threadId);
    picked.push(index);
  }
  return picked;
}

/**
 * A server error that rolled the whole statement back (pg's `DatabaseError` at severity ERROR),
 * so each commit of the group can be sent again on its own. Anything else (a lost connection, a
 * FATAL) leaves the outcome unknown, and every commit of the group fails with it, as a commit
 * sent alone would.
 */
export function rolledBack(error: unknown): boolean {
  if (typeof error !== "object" || error === null) return false;
  const { severity, code } = error as { severity?: unknown; code?: unknown };
  return severity === "ERROR" && typeof code === "string" && /^[0-9A-Z]{5}$/.test(code);
}

export type CommitSender = {
  /** One commit in its own statement: its new version, or `null` when its guard did not match. */
  one(input: StorageCommit, plan: CommitPlan): Promise<number | null>;
  /** Several commits of distinct threads in one statement. */
  group(commits: ReadonlyArray<{ input: StorageCommit; plan: CommitPlan }>): Promise<Array<number | null>>;
};

type Waiting = {
  threadId: string;
  input: StorageCommit;
  plan: CommitPlan;
  resolve(version: number | null): void;
  reject(error: unknown): void;
};

export type CommitGroups = {
  commit(input: StorageCommit, plan: CommitPlan): Promise<number | null>;
};

/**
 * Sends a commit at once while fewer than `inFlight` commit statements are out; past that it
 * waits, and when a statement returns, everything waiting that `nextGroup` allows goes in one
 * statement. A quiet process never waits; a busy one sends fewer statements, each flushing the
 * log once for many commits.
 */
export function commitGroups(options: Required<GroupCommitsOptions>, send: CommitSender): CommitGroups {
  let inFlight = 0;
  const busy = new Map<string, number>();
  const waiting: Waiting[] = [];

  const hold = (entries: Waiting[], delta: 1 | -1) => {
    for (const { threadId } of entries) {
      const count = (busy.get(threadId) ?? 0) + delta;
      if (count === 0) busy.delete(threadId);
      else busy.set(threadId, count);
    }
  };

  const alone = async (entry: Waiting) => {
    try {
      entry.resolve(await send.one(entry.input, entry.plan));
    } catch (error) {
      entry.reject(error);
    }
  };

  const run = async (entries: Waiting[]) => {
    inFlight++;
    hold(entries, 1);
    try {
      if (entries.length === 1) {
        await alone(entries[0]!);
        return;
      }
      let versions: Array<number | null>;
      try {
        versions = await send.group(entries);
      } catch (error) {
        if (!rolledBack(error)) {
          for (const entry of entries) entry.reject(error);
          return;
        }
        // Nothing of the group was written: each commit gets its own outcome on its own.
        await Promise.all(entries.map(alone));
        return;
      }
      entries.forEach((entry, index) => {
        entry.resolve(versions[index] ?? null);
      });
    } finally {
      inFlight--;
      hold(entries, -1);
      pump();
    }
  };

  const pump = () => {
    while (inFlight < options.inFlight && waiting.length > 0) {
      const picked = nextGroup(waiting, busy, options.maxCommits);
      if (picked.length === 0) return;
      const entries = picked.map((index) => waiting[index]!);
      for (let index = picked.length - 1; index >= 0; index--) waiting.splice(picked[index]!, 1);
      void run(entries);
    }
  };

  return {
    commit(input, plan) {
      return new Promise<number | null>((resolve, reject) => {
        waiting.push({ threadId: input.threadId, input, plan, resolve, reject });
        pump();
      });
    },
  };
}
