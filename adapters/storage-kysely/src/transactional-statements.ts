// Commits and thread reads as a transaction of several statements, for the families that cannot
// do either in one statement (MySQL/MariaDB, SQLite), plus the version read every family shares.
import type { ActionRow, RunRow, StorageCommit, StorageCommitResult, ThreadSnapshot } from "@pai/core";
import type { Kysely, Transaction } from "kysely";
import { type CommitPlan, tableWrites } from "./commit-plan.js";
import type { Insert, SqlFamily, StatementScope } from "./families/sql-family.js";
import type { TableNames } from "./table-names.js";

/** Rows per multi-row statement: stays far below every engine's bound-parameter limit. */
const BATCH_ROWS = 500;

/** Thrown inside the transaction so it rolls back; carries the version the caller lost to. */
class CommitConflict {
  constructor(readonly currentVersion: number | null) {}
}

export async function currentVersion(
  db: Kysely<any>,
  tables: TableNames,
  threadId: string,
): Promise<number | null> {
  const row = await db
    .selectFrom(tables.threads)
    .select("version")
    .where("thread_id", "=", threadId)
    .executeTakeFirst();
  return row ? Number(row.version) : null;
}

/** Inserts unless a row with the same key exists; true when the row was inserted. */
export async function insertIfAbsent(family: SqlFamily, insert: Insert, keys: string[]): Promise<boolean> {
  try {
    const result = await family.ignoreConflict(insert, keys).executeTakeFirst();
    return Number(result.numInsertedOrUpdatedRows ?? 0) > 0;
  } catch (error) {
    if (family.isUniqueViolation(error)) return false;
    throw error;
  }
}

async function writeCommit(
  trx: Kysely<any>,
  scope: StatementScope,
  family: SqlFamily,
  input: StorageCommit,
  plan: CommitPlan,
): Promise<number> {
  const { tables: t, codec } = scope;
  const { threadId, expectedVersion, now } = input;
  const version = expectedVersion + 1;
  if (expectedVersion === 0) {
    const values = { thread_id: threadId, ...codec.threadColumns(plan.thread!), version: 1, updated_at: now };
    if (!(await insertIfAbsent(family, trx.insertInto(t.threads).values(values), ["thread_id"]))) {
      throw new CommitConflict(await currentVersion(trx, t, threadId));
    }
  } else {
    const result = await trx
      .updateTable(t.threads)
      .set({ ...(plan.thread ? codec.threadColumns(plan.thread) : {}), version, updated_at: now })
      .where("thread_id", "=", threadId)
      .where("version", "=", expectedVersion)
      .executeTakeFirst();
    if (Number(result.numUpdatedRows) === 0) throw new CommitConflict(await currentVersion(trx, t, threadId));
  }
  for (const write of tableWrites(input, plan, codec)) {
    const table = t[write.table];
    for (let start = 0; start < write.rows.length; start += BATCH_ROWS) {
      const insert = trx.insertInto(table).values(write.rows.slice(start, start + BATCH_ROWS));
      await family.upsert(insert, table, write.rule).execute();
    }
  }
  await trx
    .insertInto(t.threadEvents)
    .values({ thread_id: threadId, version, events: codec.json(input.events), created_at: now })
    .execute();
  return version;
}

/** A commit as one transaction: a version guard, one upsert per touched table, one log row. */
export async function transactionalCommit(
  scope: StatementScope,
  family: SqlFamily,
  input: StorageCommit,
  plan: CommitPlan,
): Promise<StorageCommitResult> {
  try {
    const version = await scope.db
      .transaction()
      .execute((trx) => writeCommit(trx, scope, family, input, plan));
    return { ok: true, version };
  } catch (error) {
    if (error instanceof CommitConflict) {
      return { ok: false, reason: "conflict", currentVersion: error.currentVersion };
    }
    throw error;
  }
}

/** A thread read as five selects in one transaction, so they see one snapshot. */
export async function transactionalLoadThread(
  scope: StatementScope,
  threadId: string,
  options: { readOnly: boolean },
): Promise<ThreadSnapshot | null> {
  const { db, tables: t, codec } = scope;
  let transaction = db.transaction();
  if (options.readOnly) transaction = transaction.setAccessMode("read only");
  return transaction.execute(async (trx: Transaction<any>) => {
    const thread = await trx
      .selectFrom(t.threads)
      .selectAll()
      .where("thread_id", "=", threadId)
      .executeTakeFirst();
    if (!thread) return null;
    const messages = await trx
      .selectFrom(t.messages)
      .selectAll()
      .where("thread_id", "=", threadId)
      .orderBy("position")
      .orderBy("message_id")
      .execute();
    const runs = await trx
      .selectFrom(t.runs)
      .select("row")
      .where("thread_id", "=", threadId)
      .where("row", "is not", null)
      .orderBy("created_at")
      .orderBy("seq")
      .execute();
    const actions = await trx
      .selectFrom(t.actions)
      .select("row")
      .where("thread_id", "=", threadId)
      .orderBy("created_at")
      .orderBy("episode")
      .orderBy("seq")
      .execute();
    const toolData = await trx
      .selectFrom(t.toolData)
      .selectAll()
      .where("thread_id", "=", threadId)
      .orderBy("seq")
      .execute();
    return {
      thread: codec.thread(thread),
      messages: messages.map((row) => codec.message(row)),
      runs: runs.map((row): RunRow => codec.run(row)),
      actions: actions.map((row): ActionRow => codec.action(row)),
      toolData: toolData.map((row) => codec.toolData(row)),
    };
  });
}
