// The MySQL/MariaDB strategy: byte-wise utf8mb4 columns, JSON as longtext, `ON DUPLICATE KEY
// UPDATE` upserts, and commits as a transaction of one statement per touched table.
import { type Expression, sql } from "kysely";
import { upsertAssignments } from "../commit-plan.js";
import { transactionalCommit, transactionalLoadThread } from "../transactional-statements.js";
import { errorFields, type SqlFamily } from "./sql-family.js";

/** ER_DUP_ENTRY: a duplicate primary or unique key. */
export const MYSQL_DUP_ENTRY = 1062;
/** ER_NO_SUCH_TABLE. */
export const MYSQL_NO_SUCH_TABLE = 1146;
/** ER_LOCK_DEADLOCK: InnoDB rolled this transaction back to break a lock cycle. */
export const MYSQL_LOCK_DEADLOCK = 1213;

const isDuplicate = (error: unknown) => errorFields(error).errno === MYSQL_DUP_ENTRY;

export const mysqlFamily: SqlFamily = {
  dialect: "mysql",
  engine: "mysql",
  capabilities: { sharedAcrossProcesses: true, listenNotify: false },
  namedStatements: false,

  // Binary collations compare byte-wise, as JavaScript strings do. JSON is longtext because
  // MySQL's JSON type normalizes documents (key order, number format): round trips must be exact.
  columnTypes: {
    // 191 * 4 bytes keeps the four-column tool_data key under InnoDB's 3072-byte limit.
    id: sql`varchar(191) character set utf8mb4 collate utf8mb4_bin`,
    stamp: sql`varchar(40) character set ascii collate ascii_bin`,
    json: sql`longtext character set utf8mb4 collate utf8mb4_bin`,
    text: sql`longtext character set utf8mb4 collate utf8mb4_bin`,
    short: sql`varchar(32) character set ascii collate ascii_bin`,
    int: "integer",
    bigint: "bigint",
  },
  // MySQL has no `create index if not exists`; the migration table records it instead.
  createIndexIfNotExists: false,
  partialIndexes: false,
  json: { encode: (value) => JSON.stringify(value), decode: (value) => JSON.parse(value as string) },

  upsert(insert, _table, rule) {
    const set = Object.fromEntries(
      upsertAssignments(
        rule,
        (column): Expression<unknown> => sql`values(${sql.ref(column)})`,
        (column) => sql.ref(column),
      ),
    );
    return insert.onDuplicateKeyUpdate(set);
  },
  // INSERT IGNORE would also swallow other errors (truncation, bad values); the duplicate-key
  // error it would hide is recognized by isUniqueViolation instead.
  ignoreConflict: (insert) => insert,

  commit: (scope, input, plan) => transactionalCommit(scope, mysqlFamily, input, plan),
  // Not "read only": InnoDB's default repeatable read already gives the five reads one snapshot.
  loadThread: (scope, threadId) => transactionalLoadThread(scope, threadId, { readOnly: false }),

  isUniqueViolation: isDuplicate,
  isRetryable: (error) => errorFields(error).errno === MYSQL_LOCK_DEADLOCK,
  isMissingTable: (error) => errorFields(error).errno === MYSQL_NO_SUCH_TABLE,
};
