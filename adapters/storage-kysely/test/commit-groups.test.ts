// The group-commit queue on its own: which commits share a statement, and what each caller gets
// back when a statement fails. The real statement runs on Postgres in group-commit-postgres.test.ts.
import type { StorageCommit } from "@pai/core";
import { describe, expect, it } from "vitest";
import {
  type CommitSender,
  commitGroups,
  groupCommitsOptions,
  nextGroup,
  rolledBack,
} from "../src/commit-groups.js";
import type { CommitPlan } from "../src/commit-plan.js";

const plan: CommitPlan = { thread: null, messages: [], runs: [], actions: [], toolData: [] };
const commitOf = (threadId: string, expectedVersion = 1): StorageCommit => ({
  threadId,
  expectedVersion,
  events: [],
  now: "2026-01-01T00:00:00.000Z",
});

/** A sender whose statements finish when the test says so, recording what each carried. */
function heldSender() {
  const statements: Array<{ threads: string[]; finish(error?: unknown): void }> = [];
  const solo: string[] = [];
  const sender: CommitSender = {
    one: (input) => {
      solo.push(input.threadId);
      return new Promise((resolve, reject) => {
        statements.push({
          threads: [input.threadId],
          finish: (error) => (error ? reject(error) : resolve(input.expectedVersion + 1)),
        });
      });
    },
    group: (commits) =>
      new Promise((resolve, reject) => {
        statements.push({
          threads: commits.map(({ input }) => input.threadId),
          finish: (error) =>
            error ? reject(error) : resolve(commits.map(({ input }) => input.expectedVersion + 1)),
        });
      }),
  };
  return { sender, statements, solo };
}

const settle = () => new Promise((resolve) => setImmediate(resolve));

/** A value Postgres refuses: the statement rolls back. */
const refused = { severity: "ERROR", code: "22P05", message: "unsupported Unicode escape sequence" };

/** Commits of "a" and "b" that waited behind "x" and went out together once it returned. */
async function groupBehindBlocker() {
  const held = heldSender();
  const groups = commitGroups({ inFlight: 1, maxCommits: 16 }, held.sender);
  const blocker = groups.commit(commitOf("x"), plan);
  const a = groups.commit(commitOf("a"), plan);
  const b = groups.commit(commitOf("b"), plan);
  held.statements[0]!.finish();
  await settle();
  expect(held.statements.map((statement) => statement.threads)).toEqual([["x"], ["a", "b"]]);
  return { ...held, blocker, a, b };
}

describe("nextGroup", () => {
  it("takes waiting commits in order, one per thread, up to the limit", () => {
    const waiting = ["a", "b", "a", "c", "d"].map((threadId) => ({ threadId }));
    expect(nextGroup(waiting, new Set(), 16)).toEqual([0, 1, 3, 4]);
    expect(nextGroup(waiting, new Set(), 2)).toEqual([0, 1]);
  });

  it("leaves out threads that have a statement in flight", () => {
    const waiting = ["a", "b", "c"].map((threadId) => ({ threadId }));
    expect(nextGroup(waiting, new Set(["a", "c"]), 16)).toEqual([1]);
    expect(nextGroup(waiting, new Set(["a", "b", "c"]), 16)).toEqual([]);
  });
});

describe("rolledBack", () => {
  it("is true only for a server error at severity ERROR", () => {
    expect(rolledBack({ severity: "ERROR", code: "22P05" })).toBe(true);
    expect(rolledBack({ severity: "ERROR", code: "40P01" })).toBe(true);
    // A terminated backend or a lost socket may have committed: the outcome is unknown.
    expect(rolledBack({ severity: "FATAL", code: "57P01" })).toBe(false);
    expect(rolledBack({ code: "ECONNRESET" })).toBe(false);
    expect(rolledBack(new Error("Connection terminated unexpectedly"))).toBe(false);
    expect(rolledBack(null)).toBe(false);
  });
});

describe("groupCommitsOptions", () => {
  it("defaults on, turns off with false, and refuses bad values with the fix", () => {
    expect(groupCommitsOptions(undefined)).toEqual({ inFlight: 10, maxCommits: 16 });
    expect(groupCommitsOptions(true)).toEqual({ inFlight: 10, maxCommits: 16 });
    expect(groupCommitsOptions(false)).toBeNull();
    expect(groupCommitsOptions({ inFlight: 20 })).toEqual({ inFlight: 20, maxCommits: 16 });
    expect(() => groupCommitsOptions({ inFlight: 0 })).toThrow(
      /groupCommits.inFlight must be an integer from 1/,
    );
    expect(() => groupCommitsOptions({ maxCommits: 1.5 })).toThrow(/groupCommits.maxCommits/);
    expect(() => groupCommitsOptions({ maxCommits: 100_000 })).toThrow(/from 1 to 256/);
    expect(() => groupCommitsOptions("yes" as never)).toThrow(/must be true, false or/);
  });
});

describe("commitGroups", () => {
  it("sends each commit alone while a slot is free", async () => {
    const { sender, statements, solo } = heldSender();
    const groups = commitGroups({ inFlight: 2, maxCommits: 16 }, sender);
    const first = groups.commit(commitOf("a"), plan);
    const second = groups.commit(commitOf("b", 4), plan);
    expect(statements.map((statement) => statement.threads)).toEqual([["a"], ["b"]]);
    for (const statement of statements) statement.finish();
    await expect(first).resolves.toBe(2);
    await expect(second).resolves.toBe(5);
    expect(solo).toEqual(["a", "b"]);
  });

  it("sends what waited for a slot in one statement, never two commits of one thread", async () => {
    const { sender, statements } = heldSender();
    const groups = commitGroups({ inFlight: 1, maxCommits: 16 }, sender);
    const results = [
      groups.commit(commitOf("a"), plan),
      groups.commit(commitOf("b"), plan),
      groups.commit(commitOf("c"), plan),
      groups.commit(commitOf("b", 2), plan),
      groups.commit(commitOf("a", 2), plan),
    ];
    expect(statements.map((statement) => statement.threads)).toEqual([["a"]]);
    statements[0]!.finish();
    await settle();
    // "a" has no statement in flight any more, but its second commit queued behind "b"'s first.
    expect(statements.map((statement) => statement.threads)).toEqual([["a"], ["b", "c", "a"]]);
    statements[1]!.finish();
    await settle();
    expect(statements.map((statement) => statement.threads)).toEqual([["a"], ["b", "c", "a"], ["b"]]);
    statements[2]!.finish();
    expect(await Promise.all(results)).toEqual([2, 2, 2, 3, 3]);
  });

  it("holds back a thread's commit while a statement of that thread is in flight", async () => {
    const { sender, statements } = heldSender();
    const groups = commitGroups({ inFlight: 4, maxCommits: 16 }, sender);
    const first = groups.commit(commitOf("a"), plan);
    const second = groups.commit(commitOf("a", 2), plan);
    const other = groups.commit(commitOf("b"), plan);
    await settle();
    expect(statements.map((statement) => statement.threads)).toEqual([["a"], ["b"]]);
    statements[0]!.finish();
    await settle();
    expect(statements.map((statement) => statement.threads)).toEqual([["a"], ["b"], ["a"]]);
    statements[1]!.finish();
    statements[2]!.finish();
    expect(await Promise.all([first, second, other])).toEqual([2, 3, 2]);
  });

  it("caps a statement at maxCommits", async () => {
    const { sender, statements } = heldSender();
    const groups = commitGroups({ inFlight: 1, maxCommits: 2 }, sender);
    const results = ["a", "b", "c", "d", "e"].map((threadId) => groups.commit(commitOf(threadId), plan));
    for (let index = 0; index < 2; index++) {
      statements[index]!.finish();
      await settle();
    }
    expect(statements.map((statement) => statement.threads)).toEqual([["a"], ["b", "c"], ["d", "e"]]);
    statements[2]!.finish();
    expect(await Promise.all(results)).toEqual([2, 2, 2, 2, 2]);
  });

  it("sends each commit of a rolled-back group again on its own, so each gets its own outcome", async () => {
    const { statements, solo, blocker, a, b } = await groupBehindBlocker();
    statements[1]!.finish(refused);
    await settle();
    expect(statements.slice(2).map((statement) => statement.threads)).toEqual([["a"], ["b"]]);
    statements[2]!.finish();
    statements[3]!.finish(refused);
    await expect(blocker).resolves.toBe(2);
    await expect(a).resolves.toBe(2);
    await expect(b).rejects.toMatchObject({ code: "22P05" });
    expect(solo).toEqual(["x", "a", "b"]);
  });

  it("fails every commit of a group whose outcome is unknown, and sends none again", async () => {
    const { statements, solo, blocker, a, b } = await groupBehindBlocker();
    const lost = new Error("Connection terminated unexpectedly");
    statements[1]!.finish(lost);
    await expect(a).rejects.toBe(lost);
    await expect(b).rejects.toBe(lost);
    await expect(blocker).resolves.toBe(2);
    expect(solo).toEqual(["x"]);
    expect(statements).toHaveLength(2);
  });
});
