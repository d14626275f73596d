// Postgres' single-statement commit and thread read, used by the Postgres and PGlite families.
import type { StorageCommit, ThreadSnapshot } from "@pai/core";
import { PaiError } from "@pai/core";
import { type Kysely, type RawBuilder, sql } from "kysely";
import {
  type CommitPlan,
  type TableWrite,
  tableWrites,
  type UpsertRule,
  upsertAssignments,
  upsertRules,
} from "./commit-plan.js";
import type { StatementScope } from "./families/sql-family.js";
import { plainStatements } from "./prepared-statements.js";
import { type DbRow, RowCodec } from "./row-codec.js";
import type { TableNames } from "./table-names.js";

/**
 * Postgres does a whole commit, and a whole thread read, in ONE statement: every round trip
 * to the server costs more than the work itself, and a commit is on the path of every step.
 * Data-modifying CTEs run atomically in one snapshot; rows are shipped as one JSON document
 * per table (`jsonb_to_recordset`), so the statement's shape does not depend on row counts.
 */

type Column = readonly [name: string, type: string];

const messageColumns: Column[] = [
  ["thread_id", "text"],
  ["message_id", "text"],
  ["position", "integer"],
  ["role", "text"],
  ["message", "jsonb"],
  ["run_id", "text"],
  ["created_at", "text"],
  ["updated_at", "text"],
];
const runColumns: Column[] = [
  ["thread_id", "text"],
  ["run_id", "text"],
  ["status", "text"],
  ["row", "jsonb"],
  ["created_at", "text"],
  ["seq", "bigint"],
  ["lease_owner", "text"],
  ["lease_expires_at", "text"],
];
const actionColumns: Column[] = [
  ["thread_id", "text"],
  ["action_id", "text"],
  ["scope_key", "text"],
  ["state", "text"],
  ["created_at", "text"],
  ["episode", "integer"],
  ["seq", "bigint"],
  ["row", "jsonb"],
];
const toolDataColumns: Column[] = [
  ["thread_id", "text"],
  ["tool_call_id", "text"],
  ["channel", "text"],
  ["item_id", "text"],
  ["value", "jsonb"],
  ["updated_at", "text"],
  ["seq", "bigint"],
];

/** Thread columns bound as JSON text and cast to jsonb by the statement. */
const threadJsonColumns: ReadonlySet<string> = new Set(["metadata", "schedules"]);

/** Each table's CTE name and `jsonb_to_recordset` record type. */
const cteOf: Record<TableWrite["table"], { name: string; columns: Column[] }> = {
  messages: { name: "m", columns: messageColumns },
  runs: { name: "r", columns: runColumns },
  actions: { name: "a", columns: actionColumns },
  toolData: { name: "d", columns: toolDataColumns },
};

// Rows travel inside one JSON document (`jsonb_to_recordset`), so their JSON columns stay values
// instead of being encoded as text parameters.
const inline = new RowCodec({ encode: (value) => value, decode: (value) => value });

export type PostgresCommitResult = { version: number | null };

/** The record type `jsonb_to_recordset` decodes rows of these columns into. */
const recordTypeOf = (columns: Column[]) =>
  sql.join(columns.map(([column, type]) => sql`${sql.ref(column)} ${sql.raw(type)}`));

/**
 * The upsert of one table as a CTE: inserts the rows (decoded from one JSON parameter) only for
 * a thread whose version guard `t` matched. A single commit's `t` has one row or none; a
 * group's is joined on each row's thread.
 */
function upsertCte(
  name: string,
  table: string,
  columns: Column[],
  rule: UpsertRule,
  rows: string,
  guard: "single" | "joined",
): RawBuilder<unknown> {
  const names = sql.join(columns.map(([column]) => sql.ref(column)));
  const recordType = recordTypeOf(columns);
  const selected = sql.join(columns.map(([column]) => sql.ref(`x.${column}`)));
  const set = sql.join(
    upsertAssignments(
      rule,
      (column) => sql.ref(`excluded.${column}`),
      (column) => sql.ref(`${table}.${column}`),
    ).map(([column, value]) => sql`${sql.ref(column)} = ${value}`),
  );
  const source =
    guard === "single"
      ? sql`from t, jsonb_to_recordset(${rows}::jsonb) as x(${recordType})`
      : sql`from jsonb_to_recordset(${rows}::jsonb) as x(${recordType}) join t on t.thread_id = x.thread_id`;
  return sql`${sql.ref(name)} as (
    insert into ${sql.table(table)} (${names})
    select ${selected} ${source}
    on conflict (${sql.join(rule.keys.map((key) => sql.ref(key)))}) do update set ${set}
    returning 1
  )`;
}

/**
 * The commit statement's text depends only on its shape: whether the thread row is inserted or
 * updated, which thread columns it sets, and which tables it writes. Compiling it through Kysely
 * on every commit was about a sixth of the Postgres path's CPU, so each shape is compiled once
 * and later commits bind only their parameters. Bounded: a shape is a few dozen at most per
 * table prefix.
 */
const compiledCommits = new Map<string, string>();
const MAX_COMPILED_COMMITS = 1024;

/**
 * The commit's parameters in the order the statement below binds them: the thread row's values,
 * one JSON document per table written, then the event log row.
 */
function commitParameters(
  input: StorageCommit,
  threadValues: DbRow | null,
  writes: TableWrite[],
  events: unknown,
): unknown[] {
  const { threadId, expectedVersion, now } = input;
  const version = expectedVersion + 1;
  const parameters: unknown[] = [];
  if (expectedVersion === 0) {
    const values: DbRow = { thread_id: threadId, ...threadValues!, version, updated_at: now };
    for (const column of Object.keys(values)) parameters.push(values[column]);
  } else {
    for (const value of Object.values(threadValues ?? {})) parameters.push(value);
    parameters.push(version, now, threadId, expectedVersion);
  }
  for (const write of writes) parameters.push(JSON.stringify(write.rows));
  parameters.push(threadId, events, now);
  return parameters;
}

/** Builds the statement with Kysely (the first commit of a shape). */
function buildCommit(
  t: TableNames,
  input: StorageCommit,
  threadValues: DbRow | null,
  writes: TableWrite[],
  events: unknown,
): RawBuilder<{ version: number | null }> {
  const { threadId, expectedVersion, now } = input;
  const version = expectedVersion + 1;
  let guard: RawBuilder<unknown>;
  if (expectedVersion === 0) {
    const values: DbRow = { thread_id: threadId, ...threadValues!, version, updated_at: now };
    const columns = Object.keys(values);
    guard = sql`t as (
      insert into ${sql.table(t.threads)} (${sql.join(columns.map((column) => sql.ref(column)))})
      values (${sql.join(
        columns.map((column) =>
          threadJsonColumns.has(column) ? sql`${values[column]}::jsonb` : sql`${values[column]}`,
        ),
      )})
      on conflict (thread_id) do nothing
      returning version
    )`;
  } else {
    const assignments = [
      ...Object.entries(threadValues ?? {}).map(([column, value]) =>
        threadJsonColumns.has(column)
          ? sql`${sql.ref(column)} = ${value}::jsonb`
          : sql`${sql.ref(column)} = ${value}`,
      ),
      sql`version = ${version}`,
      sql`updated_at = ${now}`,
    ];
    guard = sql`t as (
      update ${sql.table(t.threads)} set ${sql.join(assignments)}
      where thread_id = ${threadId} and version = ${expectedVersion}
      returning version
    )`;
  }
  const ctes: RawBuilder<unknown>[] = [guard];
  for (const write of writes) {
    const { name, columns } = cteOf[write.table];
    ctes.push(upsertCte(name, t[write.table], columns, write.rule, JSON.stringify(write.rows), "single"));
  }
  ctes.push(sql`e as (
    insert into ${sql.table(t.threadEvents)} (thread_id, version, events, created_at)
    select ${threadId}, t.version, ${events}::jsonb, ${now} from t
  )`);
  // No pg_notify here: a transaction that notifies holds Postgres' global notify lock through
  // its commit (and so its WAL flush), which serializes every commit of every instance.
  return sql<{ version: number | null }>`with ${sql.join(ctes)}
    select (select version from t) as version`;
}

/**
 * Writes a planned commit in one statement. Returns the new version, or `null` when the
 * version guard did not match (nothing was written).
 */
export async function postgresCommit(
  scope: StatementScope,
  input: StorageCommit,
  plan: CommitPlan,
): Promise<PostgresCommitResult> {
  const { db, tables: t, codec } = scope;
  const threadValues = plan.thread ? codec.threadColumns(plan.thread) : null;
  const writes = tableWrites(input, plan, inline);
  const events = codec.json(input.events);
  const parameters = commitParameters(input, threadValues, writes, events);
  const shape = `${t.threads}|${input.expectedVersion === 0 ? "insert" : "update"}|${Object.keys(threadValues ?? {}).join(",")}|${writes.map((write) => write.table).join(",")}`;
  let text = compiledCommits.get(shape);
  if (text === undefined) {
    const compiled = buildCommit(t, input, threadValues, writes, events).compile(db);
    // The cached text is only right if the parameters line up with it: checked once per shape.
    if (JSON.stringify(compiled.parameters) !== JSON.stringify(parameters)) {
      throw new PaiError("INTERNAL", "postgresCommit: the commit's parameters do not match its statement.");
    }
    text = compiled.sql;
    if (compiledCommits.size >= MAX_COMPILED_COMMITS) compiledCommits.clear();
    compiledCommits.set(shape, text);
  }
  const result = await scope.send<{ version: number | null }>(text, parameters);
  const row = result.rows[0];
  return { version: row?.version === null || row?.version === undefined ? null : Number(row.version) };
}

/** One commit of a group statement. */
export type GroupedCommit = { input: StorageCommit; plan: CommitPlan };

/** The thread row's columns a group binds per commit (all of them, or none with `has_thread` false). */
const threadColumns: Column[] = [
  ["scope_key", "text"],
  ["user_key", "text"],
  ["agent_id", "text"],
  ["title", "text"],
  ["status", "text"],
  ["active_run_id", "text"],
  ["metadata", "jsonb"],
  ["created_at", "text"],
  ["wake_at", "text"],
  ["schedules", "jsonb"],
];
const groupColumns: Column[] = [
  ["thread_id", "text"],
  ["expected", "integer"],
  ["version", "integer"],
  ["now", "text"],
  ["has_thread", "boolean"],
  ["events", "jsonb"],
  ...threadColumns,
];
const groupTables: TableWrite["table"][] = ["messages", "runs", "actions", "toolData"];

/** The group statement's text per table prefix: its shape does not depend on the commits in it. */
const groupTexts = new Map<string, string>();

/**
 * Every commit of a group in one set-based statement: the commits travel as one JSON document
 * (`c`), each table's rows as another. New threads are inserted, the others updated where their
 * version still matches; `t` holds the threads whose guard matched, and every other write joins
 * it, so a commit whose guard failed writes nothing while the rest commit.
 */
function groupText(db: Kysely<any>, t: TableNames): string {
  let text = groupTexts.get(t.threads);
  if (text !== undefined) return text;
  const threadNames = threadColumns.map(([column]) => column);
  const writes = groupTables.map((table) => {
    const { name, columns } = cteOf[table];
    return upsertCte(name, t[table], columns, upsertRules[table], "[]", "joined");
  });
  const compiled = sql`with c as (
    select * from jsonb_to_recordset(${"[]"}::jsonb) as x(${recordTypeOf(groupColumns)})
  ), ti as (
    insert into ${sql.table(t.threads)} (thread_id, ${sql.join(threadNames.map((column) => sql.ref(column)))}, version, updated_at)
    select thread_id, ${sql.join(threadNames.map((column) => sql.ref(column)))}, version, now from c where expected = 0
    on conflict (thread_id) do nothing
    returning thread_id, version
  ), tu as (
    update ${sql.table(t.threads)} as th set ${sql.join(
      threadNames.map(
        (column) =>
          sql`${sql.ref(column)} = case when c.has_thread then ${sql.ref(`c.${column}`)} else ${sql.ref(`th.${column}`)} end`,
      ),
    )}, version = c.version, updated_at = c.now
    from c where c.expected > 0 and th.thread_id = c.thread_id and th.version = c.expected
    returning th.thread_id, th.version
  ), t as (
    select thread_id, version from ti union all select thread_id, version from tu
  ), ${sql.join(writes)}, e as (
    insert into ${sql.table(t.threadEvents)} (thread_id, version, events, created_at)
    select c.thread_id, t.version, c.events, c.now from c join t on t.thread_id = c.thread_id
  )
  select thread_id, version from t`.compile(db);
  // postgresCommitGroup binds the commits, then one document per table in `groupTables` order.
  if (compiled.parameters.length !== 1 + groupTables.length) {
    throw new PaiError("INTERNAL", "postgresCommitGroup: the group statement binds an unexpected parameter.");
  }
  text = compiled.sql;
  if (groupTexts.size >= MAX_COMPILED_COMMITS) groupTexts.clear();
  groupTexts.set(t.threads, text);
  return text;
}

/**
 * Writes several planned commits, of distinct threads, in one statement (see `groupText`).
 * The statement is atomic: a server error rolls every commit of the group back. Returns each
 * commit's new version, or `null` where its guard did not match.
 *
 * Sent as plain text, planned for the tables as they are at each execution, unlike the single
 * commit. Prepared, a connection kept the generic plan it made while the threads table was a
 * few pages: a hash join over a scan of the whole table, which cost 11 ms a group once the
 * table held 18,000 threads, until something (autovacuum's next ANALYZE) invalidated the plan.
 * A single commit finds its thread by key equality, which the planner takes through the index
 * at any size. Planning it each time took 0.3 to 1.7 ms in `EXPLAIN ANALYZE`, shared by the
 * group's commits (about 16 under load; bench/README.md, ninth pass).
 */
export async function postgresCommitGroup(
  scope: StatementScope,
  commits: readonly GroupedCommit[],
): Promise<Array<number | null>> {
  const rows: unknown[] = [];
  const tables: Record<TableWrite["table"], DbRow[]> = { messages: [], runs: [], actions: [], toolData: [] };
  for (const { input, plan } of commits) {
    const thread = plan.thread ? inline.threadColumns(plan.thread) : {};
    rows.push({
      ...thread,
      thread_id: input.threadId,
      expected: input.expectedVersion,
      version: input.expectedVersion + 1,
      now: input.now,
      has_thread: plan.thread !== null,
      events: input.events,
    });
    for (const write of tableWrites(input, plan, inline)) tables[write.table].push(...write.rows);
  }
  const result = await plainStatements(scope.db)<{ thread_id: string; version: number | string }>(
    groupText(scope.db, scope.tables),
    [JSON.stringify(rows), ...groupTables.map((table) => JSON.stringify(tables[table]))],
  );
  const versions = new Map(result.rows.map((row) => [row.thread_id, Number(row.version)]));
  return commits.map(({ input }) => versions.get(input.threadId) ?? null);
}

/** The thread read's text per table prefix (it binds only the thread id). */
const loadTexts = new Map<string, string>();

function loadThreadText(db: Kysely<any>, t: TableNames): string {
  let text = loadTexts.get(t.threads);
  if (text === undefined) {
    const threadId = "";
    text = sql`select
    (select row_to_json(th) from ${sql.table(t.threads)} th where th.thread_id = ${threadId}) as thread,
    (select coalesce(json_agg(m order by m.position, m.message_id), '[]') from ${sql.table(t.messages)} m
      where m.thread_id = ${threadId}) as messages,
    (select coalesce(json_agg(r.row order by r.created_at, r.seq), '[]') from ${sql.table(t.runs)} r
      where r.thread_id = ${threadId} and r.row is not null) as runs,
    (select coalesce(json_agg(a.row order by a.created_at, a.episode, a.seq), '[]') from ${sql.table(t.actions)} a
      where a.thread_id = ${threadId}) as actions,
    (select coalesce(json_agg(d order by d.seq), '[]') from ${sql.table(t.toolData)} d
      where d.thread_id = ${threadId}) as tool_data`.compile(db).sql;
    if (loadTexts.size >= MAX_COMPILED_COMMITS) loadTexts.clear();
    loadTexts.set(t.threads, text);
  }
  return text;
}

/** Reads a whole thread in one statement (one statement sees one snapshot: the read is consistent). */
export async function postgresLoadThread(
  scope: StatementScope,
  threadId: string,
): Promise<ThreadSnapshot | null> {
  const { codec } = scope;
  const text = loadThreadText(scope.db, scope.tables);
  // The text binds the id once per table read, in order.
  const result = await scope.send<{
    thread: DbRow | null;
    messages: DbRow[];
    runs: unknown[];
    actions: unknown[];
    tool_data: DbRow[];
  }>(text, [threadId, threadId, threadId, threadId, threadId]);
  const row = result.rows[0];
  if (!row?.thread) return null;
  return {
    thread: codec.thread(row.thread),
    messages: row.messages.map((message) => codec.message(message)),
    runs: row.runs.map((run) => codec.run({ row: run })),
    actions: row.actions.map((action) => codec.action({ row: action })),
    toolData: row.tool_data.map((item) => codec.toolData(item)),
  };
}
