// The SQLite strategy: one process, untyped text columns (already byte-wise), `ON CONFLICT`
// upserts, and commits as a transaction of one statement per touched table.
import { transactionalCommit, transactionalLoadThread } from "../transactional-statements.js";
import { onConflictIgnore, onConflictUpsert } from "./on-conflict.js";
import { errorFields, type SqlFamily } from "./sql-family.js";

/** Extended result code SQLITE_CONSTRAINT_PRIMARYKEY (node:sqlite's `errcode`). */
export const SQLITE_CONSTRAINT_PRIMARYKEY = 1555;
/** Extended result code SQLITE_CONSTRAINT_UNIQUE (node:sqlite's `errcode`). */
export const SQLITE_CONSTRAINT_UNIQUE = 2067;
/**
 * Other SQLite drivers (better-sqlite3, libsql) carry no numeric code, and a missing table is
 * the generic SQLITE_ERROR: SQLite's own messages are the only common signal.
 */
const SQLITE_UNIQUE_MESSAGE = /UNIQUE constraint failed/;
const SQLITE_NO_SUCH_TABLE_MESSAGE = /no such table/;

export const sqliteFamily: SqlFamily = {
  dialect: "sqlite",
  engine: "sqlite",
  capabilities: { sharedAcrossProcesses: false, listenNotify: false },
  namedStatements: false,

  // SQLite's text compares byte-wise by default (BINARY collation), as JavaScript strings do.
  columnTypes: {
    id: "text",
    stamp: "text",
    json: "text",
    text: "text",
    short: "text",
    int: "integer",
    bigint: "integer",
  },
  createIndexIfNotExists: true,
  partialIndexes: true,
  json: { encode: (value) => JSON.stringify(value), decode: (value) => JSON.parse(value as string) },

  upsert: onConflictUpsert,
  ignoreConflict: onConflictIgnore,

  commit: (scope, input, plan) => transactionalCommit(scope, sqliteFamily, input, plan),
  loadThread: (scope, threadId) => transactionalLoadThread(scope, threadId, { readOnly: true }),

  isUniqueViolation: (error) => {
    const { errcode, message } = errorFields(error);
    return (
      errcode === SQLITE_CONSTRAINT_PRIMARYKEY ||
      errcode === SQLITE_CONSTRAINT_UNIQUE ||
      SQLITE_UNIQUE_MESSAGE.test(message)
    );
  },
  // SQLite has no deadlock victim to re-run: contention surfaces as SQLITE_BUSY once the busy
  // timeout has passed, and retrying would only wait that long again.
  isRetryable: () => false,
  isMissingTable: (error) => SQLITE_NO_SUCH_TABLE_MESSAGE.test(errorFields(error).message),
};
