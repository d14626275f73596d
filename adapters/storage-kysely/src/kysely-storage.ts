// kyselyStorage: the StorageV1 over a Kysely instance; engine differences come from its SqlFamily.
import {
  type ListActionsInput,
  type ListThreadsInput,
  type NotifierV1,
  PaiError,
  type RunLeaseInput,
  type StorageCommit,
  type StorageCommitResult,
  type StorageV1,
  type StoredThreadEvents,
  type ThreadSnapshot,
} from "@pai/core";
import type { Kysely } from "kysely";
import { type GroupCommitsOptions, groupCommitsOptions } from "./commit-groups.js";
import { planCommit } from "./commit-plan.js";
import { type DialectFamily, pickSqlFamily } from "./dialect-family.js";
import { errorFields, type StatementScope } from "./families/sql-family.js";
import { plainStatements, postgresStatements } from "./prepared-statements.js";
import { type DbRow, decodeCursor, encodeCursor, RowCodec } from "./row-codec.js";
import { DEFAULT_TABLE_PREFIX, type TableNames, tableNames } from "./table-names.js";
import { insertIfAbsent } from "./transactional-statements.js";

export type KyselyStorageOptions = {
  /** A Kysely instance you own; `close()` never destroys it. Run `migrateToLatest(db)` first. */
  db: Kysely<any>;
  /** Prefix of every PAI table (default `pai_`); the same one `migrateToLatest` used. */
  tablePrefix?: string;
  /**
   * When set, every successful commit publishes `thread-advanced` on it, right after the commit
   * and without waiting for it (best effort: watchers re-read storage by version, and a quiet
   * watcher re-reads on its own after the runtime's `watchCatchUpMs`).
   */
  notifier?: NotifierV1;
  /** Overrides dialect detection for third-party Kysely dialects. */
  dialect?: DialectFamily;
  /**
   * On a Postgres server through `pg`, commits and thread reads go as named (prepared)
   * statements, parsed and planned once per connection (default `true`). Set `false` behind a
   * pooler that cannot keep them, such as PgBouncer in transaction mode before 1.21.
   */
  preparedStatements?: boolean;
  /**
   * On a Postgres server, commits that wait because `inFlight` commit statements are already out
   * go together in the next statement, each with its own version guard (default on; see
   * `GroupCommitsOptions`). `false` sends every commit alone.
   */
  groupCommits?: boolean | GroupCommitsOptions;
};

/** A `StorageV1` over Kysely, plus what it was built with. */
export type KyselyStorage = StorageV1 & {
  readonly dialect: DialectFamily;
  readonly tables: TableNames;
  /** The notifier passed in, so a runtime can pick it up from the storage. */
  readonly notifier: NotifierV1 | undefined;
};

type Db = Kysely<any>;

const COMMIT_ATTEMPTS = 3;

function positiveLimit(limit: number, what: string): number {
  if (!Number.isInteger(limit) || limit < 1) {
    throw new PaiError("INVALID_INPUT", `${what}: limit must be a positive integer, got ${limit}.`);
  }
  return limit;
}

/**
 * `now` in the form stored stamps take (`Date#toISOString`): stamps compare byte-wise in SQL, so
 * an equal instant written another way ("Z" without milliseconds, an offset) would compare wrong.
 */
function canonicalNow(now: string, what: string): string {
  const time = typeof now === "string" ? Date.parse(now) : Number.NaN;
  if (Number.isNaN(time)) {
    throw new PaiError("INVALID_INPUT", `${what}: now must be an ISO timestamp, got ${JSON.stringify(now)}.`);
  }
  return new Date(time).toISOString();
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
  if (options.preparedStatements !== undefined && typeof options.preparedStatements !== "boolean") {
    throw new PaiError(
      "INVALID_DEFINITION",
      `kyselyStorage: preparedStatements must be true or false, got ${JSON.stringify(options.preparedStatements)}.`,
    );
  }
  const family = pickSqlFamily(db, options.dialect);
  const t = tableNames(options.tablePrefix ?? DEFAULT_TABLE_PREFIX);
  const codec = new RowCodec(family.json);
  const notifier = options.notifier;

  const scope: StatementScope = {
    db,
    tables: t,
    codec,
    send: family.namedStatements
      ? postgresStatements(db, options.preparedStatements !== false)
      : plainStatements(db),
  };
  const grouping = groupCommitsOptions(options.groupCommits);
  if (grouping && family.groupCommits) scope.commitGroups = family.groupCommits(scope, grouping);

  const eventTexts: { all?: string; limited?: string } = {};
  /** The event-log read's text, compiled once; the limit is a parameter. */
  const readEventsText = (limited: boolean): string => {
    const key = limited ? "limited" : "all";
    let text = eventTexts[key];
    if (text === undefined) {
      const query = db
        .selectFrom(t.threadEvents)
        .selectAll()
        .where("thread_id", "=", "")
        .where("version", ">", 0)
        .orderBy("version");
      text = (limited ? query.limit(1) : query).compile().sql;
      eventTexts[key] = text;
    }
    return text;
  };

  /** Turns driver errors into messages that say what to do next. */
  async function guarded<T>(what: string, run: () => Promise<T>): Promise<T> {
    try {
      return await run();
    } catch (error) {
      if (PaiError.isInstance(error)) throw error;
      if (family.isMissingTable(error)) {
        throw new PaiError(
          "MIGRATION_REQUIRED",
          `PAI tables (prefix "${options.tablePrefix ?? DEFAULT_TABLE_PREFIX}") are missing: run \`await migrateToLatest(db)\` from @pai/storage-kysely before using the storage.`,
          { cause: error },
        );
      }
      throw new PaiError("INTERNAL", `${what} failed: ${errorFields(error).message}`, { cause: error });
    }
  }

  const storage: KyselyStorage = {
    specificationVersion: "v1",
    name: `kysely-${family.engine}`,
    capabilities: { ...family.capabilities },
    dialect: family.dialect,
    tables: t,
    notifier,

    async commit(input: StorageCommit): Promise<StorageCommitResult> {
      const plan = planCommit(input);
      const result = await guarded(`Commit of thread "${input.threadId}"`, async () => {
        for (let attempt = 1; ; attempt++) {
          try {
            return await family.commit(scope, input, plan);
          } catch (error) {
            if (attempt < COMMIT_ATTEMPTS && family.isRetryable(error)) continue;
            throw error;
          }
        }
      });
      if (result.ok && notifier) {
        // Delivery is best effort by contract: watchers re-read committed events by version. The
        // batch rides along for this process's watchers; a cross-process notifier sends only the
        // version, and watchers elsewhere read the batch from storage.
        notifier
          .publish({
            type: "thread-advanced",
            threadId: input.threadId,
            version: result.version,
            committed: { events: input.events, createdAt: input.now },
          })
          .catch(() => {});
      }
      return result;
    },

    async loadThread({ threadId }): Promise<ThreadSnapshot | null> {
      return guarded(`Loading thread "${threadId}"`, () => family.loadThread(scope, threadId));
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
      const bounded = limit === undefined ? undefined : positiveLimit(limit, "readEvents");
      return guarded(`Reading events of thread "${threadId}"`, async () => {
        // Sent like the thread read (prepared on Postgres): a runtime refreshes the threads it
        // keeps with this read, so it is on the path of most turns and of every answer.
        const text = readEventsText(bounded !== undefined);
        const parameters =
          bounded === undefined ? [threadId, afterVersion] : [threadId, afterVersion, bounded];
        const result = await scope.send<DbRow>(text, parameters);
        return result.rows.map((row) => codec.storedEvents(row));
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
        const insert = db.insertInto(t.runs).values(values);
        if (await insertIfAbsent(family, insert, ["thread_id", "run_id"])) return true;
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

    async listDueThreads({ now, limit }) {
      const until = canonicalNow(now, "listDueThreads");
      positiveLimit(limit, "listDueThreads");
      return guarded("listDueThreads", async () => {
        // `is not null` lets the partial index (wake_at, thread_id) serve the whole query.
        const rows = await db
          .selectFrom(t.threads)
          .select(["thread_id", "wake_at"])
          .where("wake_at", "is not", null)
          .where("wake_at", "<=", until)
          .orderBy("wake_at")
          .orderBy("thread_id")
          .limit(limit)
          .execute();
        return rows.map((row) => ({ threadId: row.thread_id as string, wakeAt: row.wake_at as string }));
      });
    },

    async close() {
      // The Kysely instance and the notifier belong to the caller.
    },
  };
  return storage;
}
