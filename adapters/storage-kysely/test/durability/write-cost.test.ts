import {
  createPai,
  type StorageCommit,
  type StorageV1,
  scopeFromIdentity,
  type ThreadEvent,
} from "@pai/core";
import { makeMessageRow } from "@pai/core/testing";
import { Kysely, type LogEvent, PostgresDialect, sql } from "kysely";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { kyselyStorage, migrateToLatest, tableNames } from "../../src/index.js";
import { openEngine } from "../support/engines.js";
import {
  createDurabilityAgent,
  createMarkerTable,
  dropMarkerTable,
  durabilityIdentity,
  planMessage,
  planModel,
} from "./fixtures/durability-agent.js";
import { postgresUrl } from "./worker-process.js";

const LENGTHS = [10, 100, 1000] as const;
const RUNS_PER_LENGTH = 3;
/** Each measured run is: user message, step 1 (calls `work`), tool outcome, step 2 (answers). */
const STEPS_PER_RUN = 2;

type Counters = { commits: number; events: number; eventBytes: number; statements: number; sqlBytes: number };

const emptyCounters = (): Counters => ({ commits: 0, events: 0, eventBytes: 0, statements: 0, sqlBytes: 0 });

const WRITE_NODES = new Set(["InsertQueryNode", "UpdateQueryNode", "DeleteQueryNode"]);

/** Builder writes, and the raw single-statement commit (data-modifying CTEs) Postgres uses. */
function isWrite(event: LogEvent & { level: "query" }): boolean {
  const kind = event.query.query.kind;
  return WRITE_NODES.has(kind) || (kind === "RawNode" && /^\s*with\b/i.test(event.query.sql));
}

function parameterBytes(value: unknown): number {
  if (value === null || value === undefined) return 0;
  if (typeof value === "string") return Buffer.byteLength(value, "utf8");
  if (typeof value === "number" || typeof value === "boolean" || typeof value === "bigint") {
    return String(value).length;
  }
  if (value instanceof Uint8Array) return value.byteLength;
  return Buffer.byteLength(JSON.stringify(value), "utf8");
}

describe("write cost per step on Postgres", async () => {
  const engine = await openEngine("postgres", "dur_cost");
  if ("skip" in engine) {
    it.skip(`skipped: ${engine.skip}`, () => {});
    return;
  }
  const { prefix } = engine;
  const counters = emptyCounters();
  // One connection, so every write of the runtime happens in the backend whose table
  // statistics this test flushes before reading pg_stat_user_tables.
  const db = new Kysely<any>({
    dialect: new PostgresDialect({ pool: new pg.Pool({ connectionString: postgresUrl, max: 1 }) }),
    log: (event: LogEvent) => {
      if (event.level !== "query" || !isWrite(event)) return;
      counters.statements++;
      // Named (prepared) statements reach loggers as `{ name, text }` objects.
      counters.sqlBytes += Buffer.byteLength(String(event.query.sql), "utf8");
      for (const parameter of event.query.parameters) counters.sqlBytes += parameterBytes(parameter);
    },
  });
  const base = kyselyStorage({ db, tablePrefix: prefix });
  const counting: StorageV1 = new Proxy(base, {
    get(target, key) {
      if (key === "commit") {
        return async (input: StorageCommit) => {
          const result = await target.commit(input);
          if (result.ok) {
            counters.commits++;
            counters.events += input.events.length;
            counters.eventBytes += Buffer.byteLength(JSON.stringify(input.events), "utf8");
          }
          return result;
        };
      }
      const value = Reflect.get(target, key, target);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
  const pai = createPai({
    scope: scopeFromIdentity,
    agents: { durability: createDurabilityAgent({ db, prefix, instanceId: "cost" }) },
    storage: counting,
    model: planModel({ instanceId: "cost" }),
  });
  const tables = Object.values(tableNames(prefix));

  /** Rows inserted, updated and deleted in PAI's tables, as Postgres counted them. */
  async function rowsWritten(): Promise<number> {
    await sql`select pg_stat_force_next_flush()`.execute(db);
    const result = await sql<{ rows: string | null }>`
      select sum(n_tup_ins + n_tup_upd + n_tup_del)::text as rows
      from pg_stat_user_tables where relname = any(${tables})`.execute(db);
    return Number(result.rows[0]?.rows ?? 0);
  }

  beforeAll(async () => {
    await migrateToLatest(engine.db, { tablePrefix: prefix });
    await createMarkerTable(engine.db, prefix);
  });

  afterAll(async () => {
    await pai.close();
    await db.destroy();
    await dropMarkerTable(engine.db, prefix);
    await engine.dispose();
  });

  it("rows and bytes written per step are flat (within 20%) at 10, 100 and 1000 messages", async () => {
    const measured: Array<{ length: number } & Record<keyof Counters | "rows", number>> = [];
    for (const length of LENGTHS) {
      const threadId = `cost-${length}`;
      const thread = await pai.trusted.createThread({
        scope: scopeFromIdentity(durabilityIdentity),
        threadId,
      });
      // History written directly (one commit), so the thread is long before the measured runs.
      const history: ThreadEvent[] = Array.from({ length }, (_, index) => ({
        type: "message-upserted",
        message: makeMessageRow({
          threadId,
          messageId: `history-${index}`,
          position: index + 1,
          role: index % 2 === 0 ? "user" : "assistant",
          text: `history message ${index} of a long conversation`,
        }),
      }));
      const seeded = await base.commit({
        threadId,
        expectedVersion: thread.version,
        events: history,
        now: new Date().toISOString(),
      });
      expect(seeded.ok).toBe(true);

      const totals = { ...emptyCounters(), rows: 0 };
      for (let run = 0; run < RUNS_PER_LENGTH; run++) {
        Object.assign(counters, emptyCounters());
        const rowsBefore = await rowsWritten();
        await pai.service.threads.send({
          identity: durabilityIdentity,
          threadId,
          message: { text: planMessage([["work"]]) },
        });
        await pai.waitForIdle(threadId);
        const rows = (await rowsWritten()) - rowsBefore;
        for (const key of Object.keys(counters) as Array<keyof Counters>) totals[key] += counters[key];
        totals.rows += rows;
      }
      const snapshot = (await base.loadThread({ threadId }))!;
      expect(snapshot.runs.map((run) => run.status)).toEqual(
        Array.from({ length: RUNS_PER_LENGTH }, () => "completed"),
      );
      expect(snapshot.messages).toHaveLength(length + RUNS_PER_LENGTH * 2);
      const perStep = (value: number) => value / (RUNS_PER_LENGTH * STEPS_PER_RUN);
      measured.push({
        length,
        commits: perStep(totals.commits),
        events: perStep(totals.events),
        eventBytes: perStep(totals.eventBytes),
        statements: perStep(totals.statements),
        sqlBytes: perStep(totals.sqlBytes),
        rows: perStep(totals.rows),
      });
    }

    console.log(
      [
        "[durability] write cost per step (mean of 3 runs x 2 steps; a run = user message + 2 model steps + 1 tool call):",
        "  messages | commits | events | event bytes | write stmts | SQL+param bytes | rows written (pg_stat)",
        ...measured.map(
          (row) =>
            `  ${String(row.length).padStart(8)} | ${row.commits.toFixed(2).padStart(7)} | ${row.events
              .toFixed(2)
              .padStart(6)} | ${row.eventBytes.toFixed(0).padStart(11)} | ${row.statements
              .toFixed(2)
              .padStart(11)} | ${row.sqlBytes.toFixed(0).padStart(15)} | ${row.rows.toFixed(2).padStart(6)}`,
        ),
      ].join("\n"),
    );

    for (const key of ["commits", "eventBytes", "statements", "sqlBytes", "rows"] as const) {
      const values = measured.map((row) => row[key]);
      const spread = Math.max(...values) / Math.min(...values);
      expect(
        spread,
        `${key} per step at ${LENGTHS.join("/")} messages: ${values.join(", ")}`,
      ).toBeLessThanOrEqual(1.2);
    }
    // Rows written must be counted at all (statistics flushed), or the flatness check is vacuous.
    expect(Math.min(...measured.map((row) => row.rows))).toBeGreaterThan(0);
  });
});
