import {
  type ActionRow,
  type ListActionsInput,
  type ListThreadsInput,
  type NotifierV1,
  PaiError,
  type RunLeaseInput,
  type RunRow,
  type StorageCapabilities,
  type StorageCommit,
  type StorageCommitResult,
  type StorageV1,
  type StoredThreadEvents,
  type ThreadRow,
  type ThreadSnapshot,
} from "@pai/core";
import { type Expression, type Kysely, sql, type Transaction } from "kysely";
import {
  type CommitPlan,
  planCommit,
  type TableWrite,
  tableWrites,
  upsertAssignments,
} from "./commit-plan.js";
import { type DialectFamily, detectDialectFamily } from "./dialect-family.js";
import { type CommitNotification, postgresCommit, postgresLoadThread } from "./postgres-statements.js";
import { decodeCursor, encodeCursor, RowCodec } from "./row-codec.js";
import { DEFAULT_TABLE_PREFIX, type TableNames, tableNames } from "./table-names.js";

export type KyselyStorageOptions = {
  /** A Kysely instance you own; `close()` never destroys it. Run `migrateToLatest(db)` first. */
  db: Kysely<any>;
  /** Prefix of every PAI table (default `pai_`); the same one `migrateToLatest` used. */
  tablePrefix?: string;
  /**
   * When set, every successful commit publishes `thread-advanced` on it. A `postgresNotifier`
   * on the same database is notified by the commit statement itself (atomically, no extra
   * round trip); any other notifier is published to after the commit (best effort).
   */
  notifier?: NotifierV1;
  /** Overrides dialect detection for third-party Kysely dialects. */
  dialect?: DialectFamily;
};

/** A `StorageV1` over Kysely, plus what it was built with. */
export type KyselyStorage = StorageV1 & {
  readonly dialect: DialectFamily;
  readonly tables: TableNames;
  /** The notifier passed in, so a runtime can pick it up from the storage. */
  readonly notifier: NotifierV1 | undefined;
};

type Db = Kysely<any>;

/** Rows per multi-row statement: stays far below every engine's bound-parameter limit. */
const BATCH_ROWS = 500;
const COMMIT_ATTEMPTS = 3;

class CommitConflict {
  constructor(readonly currentVersion: number | null) {}
}

function errorCode(error: unknown): { code?: unknown; errno?: unknown; message: string } {
  const value = (typeof error === "object" && error !== null ? error : {}) as Record<string, unknown>;
  return { code: value.code, errno: value.errno, message: String(value.message ?? error) };
}

function isUniqueViolation(error: unknown): boolean {
  const { code, errno, message } = errorCode(error);
  return code === "23505" || errno === 1062 || /UNIQUE constraint failed/.test(message);
}

/** Deadlocks and serialization failures roll the whole transaction back, so it can simply run again. */
function isRetryable(error: unknown): boolean {
  const { code, errno } = errorCode(error);
  return code === "40P01" || code === "40001" || errno === 1213;
}

function isMissingTable(error: unknown): boolean {
  const { code, errno, message } = errorCode(error);
  return code === "42P01" || errno === 1146 || /no such table/.test(message);
}

function positiveLimit(limit: number, what: string): number {
  if (!Number.isInteger(limit) || limit < 1) {
    throw new PaiError("INVALID_INPUT", `${what}: limit must be a positive integer, got ${limit}.`);
  }
  return limit;
}

function invalidCursor(what: string): PaiError {
  return new PaiError(
    "INVALID_INPUT",
    `${what}: the cursor is not one this storage returned; start again without it.`,
  );
}

/**
 * PAI storage on a Kysely instance: Postgres (`pg`), MySQL/MariaDB (`mysql2`), SQLite
 * (`createNodeSqliteDialect`) or PGlite (`createPgliteDialect`). Each commit is one transaction
 * guarded by the thread version and writes only the rows its events name.
 *
 * @example
 * await migrateToLatest(db);
 * const storage = kyselyStorage({ db });
 */
export function kyselyStorage(options: KyselyStorageOptions): KyselyStorage {
  const db: Db = options.db;
  const family = detectDialectFamily(db, options.dialect);
  const t = tableNames(options.tablePrefix ?? DEFAULT_TABLE_PREFIX);
  const codec = new RowCodec(family);
  const notifier = options.notifier;
  const adapterName = db.getExecutor().adapter.constructor.name;
  const singleProcess = family === "sqlite" || /pglite/i.test(adapterName);
  const capabilities: StorageCapabilities = {
    sharedAcrossProcesses: !singleProcess,
    listenNotify: family === "postgres" && !singleProcess,
  };

  const commitChannel = (notifier as { commitChannel?: unknown } | undefined)?.commitChannel;
  const inStatementNotification: CommitNotification | null =
    family === "postgres" && !singleProcess && typeof commitChannel === "string"
      ? { channel: commitChannel }
      : null;

  const excluded = (column: string): Expression<unknown> =>
    family === "mysql" ? sql`values(${sql.ref(column)})` : sql.ref(`excluded.${column}`);

  /** One multi-row upsert per batch of the write's rows. */
  async function upsert(trx: Db, table: string, write: TableWrite): Promise<void> {
    const current = (column: string) =>
      family === "mysql" ? sql.ref(column) : sql.ref(`${table}.${column}`);
    const set = Object.fromEntries(upsertAssignments(write.rule, excluded, current));
    for (let start = 0; start < write.rows.length; start += BATCH_ROWS) {
      const insert = trx.insertInto(table).values(write.rows.slice(start, start + BATCH_ROWS));
      await (family === "mysql"
        ? insert.onDuplicateKeyUpdate(set)
        : insert.onConflict((conflict) => conflict.columns(write.rule.keys).doUpdateSet(set))
      ).execute();
    }
  }

  async function currentVersion(trx: Db, threadId: string): Promise<number | null> {
    const row = await trx
      .selectFrom(t.threads)
      .select("version")
      .where("thread_id", "=", threadId)
      .executeTakeFirst();
    return row ? Number(row.version) : null;
  }

  async function insertThread(trx: Db, thread: ThreadRow, now: string): Promise<boolean> {
    const values = {
      thread_id: thread.threadId,
      ...codec.threadColumns(thread),
      version: 1,
      updated_at: now,
    };
    if (family === "mysql") {
      try {
        await trx.insertInto(t.threads).values(values).execute();
        return true;
      } catch (error) {
        if (isUniqueViolation(error)) return false;
        throw error;
      }
    }
    const result = await trx
      .insertInto(t.threads)
      .values(values)
      .onConflict((conflict) => conflict.column("thread_id").doNothing())
      .executeTakeFirst();
    return Number(result.numInsertedOrUpdatedRows ?? 0) === 1;
  }

  async function writeCommit(trx: Db, input: StorageCommit, plan: CommitPlan): Promise<number> {
    const { threadId, expectedVersion, now } = input;
    const version = expectedVersion + 1;
    if (expectedVersion === 0) {
      if (!(await insertThread(trx, plan.thread!, now))) {
        throw new CommitConflict(await currentVersion(trx, threadId));
      }
    } else {
      const result = await trx
        .updateTable(t.threads)
        .set({ ...(plan.thread ? codec.threadColumns(plan.thread) : {}), version, updated_at: now })
        .where("thread_id", "=", threadId)
        .where("version", "=", expectedVersion)
        .executeTakeFirst();
      if (Number(result.numUpdatedRows) === 0) throw new CommitConflict(await currentVersion(trx, threadId));
    }
    for (const write of tableWrites(input, plan, codec)) await upsert(trx, t[write.table], write);
    await trx
      .insertInto(t.threadEvents)
      .values({ thread_id: threadId, version, events: codec.json(input.events), created_at: now })
      .execute();
    return version;
  }

  /** Turns driver errors into messages that say what to do next. */
  async function guarded<T>(what: string, run: () => Promise<T>): Promise<T> {
    try {
      return await run();
    } catch (error) {
      if (PaiError.isInstance(error)) throw error;
      if (isMissingTable(error)) {
        throw new PaiError(
          "MIGRATION_REQUIRED",
          `PAI tables (prefix "${options.tablePrefix ?? DEFAULT_TABLE_PREFIX}") are missing: run \`await migrateToLatest(db)\` from @pai/storage-kysely before using the storage.`,
          { cause: error },
        );
      }
      throw new PaiError("INTERNAL", `${what} failed: ${errorCode(error).message}`, { cause: error });
    }
  }

  const storage: KyselyStorage = {
    specificationVersion: "v1",
    name: `kysely-${singleProcess && family === "postgres" ? "pglite" : family}`,
    capabilities,
    dialect: family,
    tables: t,
    notifier,

    async commit(input: StorageCommit): Promise<StorageCommitResult> {
      const plan = planCommit(input);
      const result = await guarded(`Commit of thread "${input.threadId}"`, async () => {
        for (let attempt = 1; ; attempt++) {
          try {
            if (family === "postgres") {
              const { version } = await postgresCommit(db, t, codec, input, plan, inStatementNotification);
              if (version !== null) return { ok: true, version } as const;
              // The guard matched nothing: read the version as it is now (the rare path).
              throw new CommitConflict(await currentVersion(db, input.threadId));
            }
            const version = await db.transaction().execute((trx) => writeCommit(trx, input, plan));
            return { ok: true, version } as const;
          } catch (error) {
            if (error instanceof CommitConflict) {
              return { ok: false, reason: "conflict", currentVersion: error.currentVersion } as const;
            }
            if (attempt < COMMIT_ATTEMPTS && isRetryable(error)) continue;
            throw error;
          }
        }
      });
      if (result.ok && notifier && !inStatementNotification) {
        // Delivery is best effort by contract: watchers re-read committed events by version.
        notifier
          .publish({ type: "thread-advanced", threadId: input.threadId, version: result.version })
          .catch(() => {});
      }
      return result;
    },

    async loadThread({ threadId }): Promise<ThreadSnapshot | null> {
      return guarded(`Loading thread "${threadId}"`, async () => {
        if (family === "postgres") return postgresLoadThread(db, t, codec, threadId);
        // One consistent snapshot across the five reads; MySQL's default is already repeatable read.
        let transaction = db.transaction();
        if (family !== "mysql") transaction = transaction.setAccessMode("read only");
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
      });
    },

    async listThreads(input: ListThreadsInput) {
      const limit = positiveLimit(input.limit, "listThreads");
      const after = input.cursor ? decodeCursor(input.cursor, 2) : null;
      if (input.cursor && !after) throw invalidCursor("listThreads");
      return guarded("listThreads", async () => {
        let query = db.selectFrom(t.threads).selectAll().where("scope_key", "=", input.scopeKey);
        if (input.agentId !== undefined) query = query.where("agent_id", "=", input.agentId);
        if (after) {
          const [updatedAt, threadId] = after;
          query = query.where((eb) =>
            eb.or([
              eb("updated_at", "<", updatedAt),
              eb.and([eb("updated_at", "=", updatedAt), eb("thread_id", ">", threadId)]),
            ]),
          );
        }
        const rows = await query
          .orderBy("updated_at", "desc")
          .orderBy("thread_id", "asc")
          .limit(limit + 1)
          .execute();
        const threads = rows.slice(0, limit).map((row) => codec.thread(row));
        const last = threads[threads.length - 1];
        return {
          threads,
          nextCursor: rows.length > limit && last ? encodeCursor([last.updatedAt, last.threadId]) : null,
        };
      });
    },

    async readEvents({ threadId, afterVersion, limit }): Promise<StoredThreadEvents[]> {
      return guarded(`Reading events of thread "${threadId}"`, async () => {
        let query = db
          .selectFrom(t.threadEvents)
          .selectAll()
          .where("thread_id", "=", threadId)
          .where("version", ">", afterVersion)
          .orderBy("version");
        if (limit !== undefined) query = query.limit(positiveLimit(limit, "readEvents"));
        const rows = await query.execute();
        return rows.map((row) => codec.storedEvents(row));
      });
    },

    async getAction({ threadId, actionId }) {
      return guarded(`Reading action "${actionId}"`, async () => {
        const row = await db
          .selectFrom(t.actions)
          .select("row")
          .where("thread_id", "=", threadId)
          .where("action_id", "=", actionId)
          .executeTakeFirst();
        return row ? codec.action(row) : null;
      });
    },

    async listActions(input: ListActionsInput) {
      const limit = positiveLimit(input.limit, "listActions");
      const after = input.cursor ? decodeCursor(input.cursor, 3) : null;
      if (input.cursor && !after) throw invalidCursor("listActions");
      return guarded("listActions", async () => {
        let query = db
          .selectFrom(t.actions)
          .select(["row", "created_at", "thread_id", "action_id"])
          .where("scope_key", "=", input.scopeKey);
        if (input.state !== undefined) query = query.where("state", "=", input.state);
        if (after) {
          const [createdAt, threadId, actionId] = after;
          query = query.where((eb) =>
            eb.or([
              eb("created_at", ">", createdAt),
              eb.and([eb("created_at", "=", createdAt), eb("thread_id", ">", threadId)]),
              eb.and([
                eb("created_at", "=", createdAt),
                eb("thread_id", "=", threadId),
                eb("action_id", ">", actionId),
              ]),
            ]),
          );
        }
        const rows = await query
          .orderBy("created_at")
          .orderBy("thread_id")
          .orderBy("action_id")
          .limit(limit + 1)
          .execute();
        const page = rows.slice(0, limit);
        const last = page[page.length - 1];
        return {
          actions: page.map((row) => codec.action(row)),
          nextCursor:
            rows.length > limit && last
              ? encodeCursor([last.created_at as string, last.thread_id as string, last.action_id as string])
              : null,
        };
      });
    },

    async acquireRunLease({ threadId, runId, owner, now, expiresAt }: RunLeaseInput): Promise<boolean> {
      return guarded(`Leasing run "${runId}"`, async () => {
        const updated = await db
          .updateTable(t.runs)
          .set({ lease_owner: owner, lease_expires_at: expiresAt })
          .where("thread_id", "=", threadId)
          .where("run_id", "=", runId)
          .where((eb) =>
            eb.or([
              eb("lease_owner", "is", null),
              eb("lease_expires_at", "is", null),
              eb("lease_expires_at", "<=", now),
              eb("lease_owner", "=", owner),
            ]),
          )
          .executeTakeFirst();
        if (Number(updated.numUpdatedRows) > 0) return true;
        // No row yet (the lease came before the run's first commit): create a lease-only row.
        const values = {
          thread_id: threadId,
          run_id: runId,
          lease_owner: owner,
          lease_expires_at: expiresAt,
        };
        try {
          const insert = db.insertInto(t.runs).values(values);
          const inserted = await (family === "mysql"
            ? insert
            : insert.onConflict((conflict) => conflict.columns(["thread_id", "run_id"]).doNothing())
          ).executeTakeFirst();
          if (Number(inserted.numInsertedOrUpdatedRows ?? 0) > 0) return true;
        } catch (error) {
          if (!isUniqueViolation(error)) throw error;
        }
        // The row exists and the update matched nothing. MySQL without CLIENT_FOUND_ROWS also
        // reports 0 for a renewal that changed no value, so confirm against the row itself.
        const row = await db
          .selectFrom(t.runs)
          .select(["lease_owner", "lease_expires_at"])
          .where("thread_id", "=", threadId)
          .where("run_id", "=", runId)
          .executeTakeFirst();
        return row?.lease_owner === owner && row?.lease_expires_at === expiresAt;
      });
    },

    async releaseRunLease({ threadId, runId, owner }) {
      await guarded(`Releasing the lease of run "${runId}"`, async () => {
        await db
          .updateTable(t.runs)
          .set({ lease_owner: null, lease_expires_at: null })
          .where("thread_id", "=", threadId)
          .where("run_id", "=", runId)
          .where("lease_owner", "=", owner)
          .execute();
      });
    },

    async listRecoverableRuns({ now, limit }) {
      positiveLimit(limit, "listRecoverableRuns");
      return guarded("listRecoverableRuns", async () => {
        const rows = await db
          .selectFrom(t.runs)
          .select(["thread_id", "run_id"])
          .where("status", "in", ["running", "queued"])
          .where((eb) =>
            eb.or([
              eb("lease_owner", "is", null),
              eb("lease_expires_at", "is", null),
              eb("lease_expires_at", "<=", now),
            ]),
          )
          .orderBy("thread_id")
          .orderBy("run_id")
          .limit(limit)
          .execute();
        return rows.map((row) => ({ threadId: row.thread_id as string, runId: row.run_id as string }));
      });
    },

    async close() {
      // The Kysely instance and the notifier belong to the caller.
    },
  };
  return storage;
}
