import { spawn } from "node:child_process";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { type Kysely, sql } from "kysely";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { assertChildProcessesCanRun, openPrefixedPostgres, postgresUrl } from "./worker-process.js";

const repoRoot = fileURLToPath(new URL("../../../../", import.meta.url));
const script = fileURLToPath(new URL("./fixtures/deadline-process.ts", import.meta.url));
const RACES = 200;

type Line = { type: string; [key: string]: unknown };

/**
 * Starts one role. It reports on stdout (collected, and passed to `onLine` as they come);
 * `stdin` takes the actions a racer should race, one JSON line each. `done` resolves with every
 * line once the role ends (rejects on a non-zero exit).
 */
function startRole(config: Record<string, unknown>, onLine?: (line: Line) => void) {
  const child = spawn(process.execPath, [script], {
    cwd: repoRoot,
    env: {
      ...process.env,
      PAI_DEADLINE_PROCESS: JSON.stringify({ url: postgresUrl, ...config }),
      NODE_COMPILE_CACHE: join(tmpdir(), "pai-durability-compile-cache"),
      NODE_NO_WARNINGS: "1",
    },
    stdio: ["pipe", "pipe", "pipe"],
  });
  // A racer that died is reported by its exit; writing to it must not throw EPIPE here.
  child.stdin.on("error", () => {});
  const done = new Promise<Line[]>((resolve, reject) => {
    const lines: Line[] = [];
    let stderr = "";
    child.stderr.on("data", (chunk) => {
      stderr = (stderr + String(chunk)).slice(-4000);
    });
    createInterface({ input: child.stdout }).on("line", (text) => {
      const line = JSON.parse(text) as Line;
      lines.push(line);
      onLine?.(line);
    });
    child.on("exit", (code) => {
      if (code === 0 && lines.some((line) => line.type === "done")) resolve(lines);
      else reject(new Error(`${String(config.role)} exited ${code}: ${stderr}`));
    });
  });
  return { stdin: child.stdin, done };
}

const available = await (async () => {
  const pool = new pg.Pool({ connectionString: postgresUrl, max: 1 });
  try {
    await pool.query("select 1");
    return true;
  } catch (error) {
    if (process.env.CI === "true") throw new Error(`Postgres is required under CI=true: ${String(error)}`);
    return false;
  } finally {
    await pool.end();
  }
})();

describe.skipIf(!available)("deadlines racing answers across processes", () => {
  const prefix = `pai_race_${Math.random().toString(36).slice(2, 8)}_`;
  let db: Kysely<any>;
  let dispose: (() => Promise<void>) | undefined;

  beforeAll(async () => {
    assertChildProcessesCanRun();
    ({ db, dispose } = await openPrefixedPostgres(prefix, 4));
  });

  afterAll(async () => {
    await dispose?.();
  });

  it(`resolves each of ${RACES} actions exactly once, observers once, the loser told CONFLICT`, {
    timeout: 240_000,
  }, async () => {
    // The racers start with the asker and get each action as it is asked, so both are up and
    // idle when the first deadline (a few seconds out) comes due.
    const racers = [
      startRole({ prefix, role: "answer", instanceId: "answerer", deadlineMs: 8_000 }),
      startRole({ prefix, role: "wake", instanceId: "waker", deadlineMs: 8_000 }),
    ];
    // Awaited below; a racer that fails while the asker is still asking must not go unhandled.
    for (const racer of racers) racer.done.catch(() => {});
    const asked: Array<{ threadId: string; actionId: string; deadlineAt: string }> = [];
    const askerRole = startRole(
      { prefix, role: "ask", instanceId: "asker", count: RACES, deadlineMs: 8_000 },
      (line) => {
        if (line.type !== "asked") return;
        const action = {
          threadId: String(line.threadId),
          actionId: String(line.actionId),
          deadlineAt: String(line.deadlineAt),
        };
        asked.push(action);
        for (const racer of racers) racer.stdin.write(`${JSON.stringify(action)}\n`);
      },
    );
    const asker = await askerRole.done.finally(() => {
      for (const racer of racers) racer.stdin.end();
    });
    expect(asked).toHaveLength(RACES);
    const actions = asked;
    const [answerer, waker] = await Promise.all(racers.map((racer) => racer.done));
    const resolvedBy = new Map<string, string[]>();
    // On a slow machine the asker itself may outlive the first deadlines and wake those threads
    // (its commits scheduled the wake-ups): a third racer, counted like the others.
    for (const [who, lines] of [
      ["asker", asker],
      ["answerer", answerer],
      ["waker", waker],
    ] as const) {
      for (const line of lines) {
        if (line.type !== "resolved") continue;
        resolvedBy.set(String(line.actionId), [...(resolvedBy.get(String(line.actionId)) ?? []), who]);
      }
    }
    const outcomes = new Map(
      answerer
        .filter((line) => line.type === "answer")
        .map((line) => [String(line.actionId), String(line.outcome)]),
    );
    const table = `${prefix}actions`;
    const rows = await sql<{
      action_id: string;
      row: unknown;
    }>`select action_id, row from ${sql.table(table)}`.execute(db);
    const stored = new Map(
      rows.rows.map((row) => [
        row.action_id,
        (typeof row.row === "string" ? JSON.parse(row.row) : row.row) as { state: string },
      ]),
    );
    let answered = 0;
    let expired = 0;
    for (const { actionId } of actions) {
      // Exactly one resolution, seen by exactly one process's observers.
      const seen = {
        by: resolvedBy.get(actionId),
        outcome: outcomes.get(actionId),
        stored: stored.get(actionId),
      };
      expect(seen.by ?? [], `${actionId}: ${JSON.stringify(seen)}`).toHaveLength(1);
      const state = stored.get(actionId)?.state;
      if (state === "submitted") {
        answered++;
        expect(outcomes.get(actionId)).toBe("ok");
        expect(resolvedBy.get(actionId)).toEqual(["answerer"]);
      } else {
        expired++;
        expect(state).toBe("cancelled");
        expect(outcomes.get(actionId)).toBe("CONFLICT");
        expect(["waker", "asker"]).toContain(resolvedBy.get(actionId)?.[0]);
      }
    }
    // Both sides won races: these were real races, not one side always first.
    expect(answered).toBeGreaterThan(0);
    expect(expired).toBeGreaterThan(0);
    const runs = await sql<{ status: string }>`select status from ${sql.table(`${prefix}runs`)}`.execute(db);
    expect(runs.rows.every((run) => run.status === "completed")).toBe(true);
    console.log(`deadline races: ${RACES} actions, answer won ${answered}, deadline won ${expired}`);
  });
});
