// The contract each SQL family's strategy fulfils. Everything that differs between Postgres,
// PGlite, MySQL/MariaDB and SQLite sits behind it, so the storage and migrations never branch on
// which engine they talk to.
import type { StorageCapabilities, StorageCommit, StorageCommitResult, ThreadSnapshot } from "@pai/core";
import type { ColumnDataType, Expression, InsertQueryBuilder, InsertResult, Kysely } from "kysely";
import type { CommitGroups, GroupCommitsOptions } from "../commit-groups.js";
import type { CommitPlan, UpsertRule } from "../commit-plan.js";
import type { DialectFamily } from "../dialect-family.js";
import type { StatementSender } from "../prepared-statements.js";
import type { RowCodec } from "../row-codec.js";
import type { TableNames } from "../table-names.js";

/** The logical column kinds of PAI's schema; each family maps them to physical types. */
export type ColumnKind = "id" | "stamp" | "json" | "text" | "short" | "int" | "bigint";
export type ColumnType = ColumnDataType | Expression<unknown>;

/** How JSON values travel into and out of a family's JSON columns. */
export type JsonColumns = {
  encode(value: unknown): unknown;
  decode(value: unknown): unknown;
};

export type Insert = InsertQueryBuilder<any, any, InsertResult>;

/** What a family's statements run against: the database, its tables, and how rows are encoded. */
export type StatementScope = {
  db: Kysely<any>;
  tables: TableNames;
  codec: RowCodec;
  /** Sends a finished statement text (named, i.e. prepared, where the family and driver allow). */
  send: StatementSender;
  /** Where commits go when the family groups them (see `SqlFamily.groupCommits`). */
  commitGroups?: CommitGroups;
};

export interface SqlFamily {
  /** The family reported as `KyselyStorage.dialect` (PGlite is a Postgres). */
  readonly dialect: DialectFamily;
  /** The engine in the storage's name, `kysely-<engine>`. */
  readonly engine: "postgres" | "pglite" | "mysql" | "sqlite";
  readonly capabilities: StorageCapabilities;
  /** The server keeps named statements per connection (a Postgres server; not PGlite, MySQL or SQLite). */
  readonly namedStatements: boolean;
  /**
   * Writes several threads' commits in one statement when they queue up (a Postgres server,
   * whose many clients each pay a round trip and a log flush per statement).
   */
  readonly groupCommits?: (scope: StatementScope, options: Required<GroupCommitsOptions>) => CommitGroups;

  /** Physical column types; ids and stamps must compare byte-wise (see migrations). */
  readonly columnTypes: Record<ColumnKind, ColumnType>;
  readonly createIndexIfNotExists: boolean;
  /** The engine can index only the rows matching a `where` (MySQL/MariaDB cannot). */
  readonly partialIndexes: boolean;
  readonly json: JsonColumns;

  /** Adds the family's "insert or update on key conflict" clause. */
  upsert(insert: Insert, table: string, rule: UpsertRule): Insert;
  /**
   * Makes a key conflict insert nothing, where the family can say so in SQL; where it cannot,
   * the insert fails with a unique violation, which callers treat the same way.
   */
  ignoreConflict(insert: Insert, keys: string[]): Insert;

  /** Writes a planned commit guarded by the thread version, or reports the conflict. */
  commit(scope: StatementScope, input: StorageCommit, plan: CommitPlan): Promise<StorageCommitResult>;
  /** Reads a whole thread from one consistent snapshot. */
  loadThread(scope: StatementScope, threadId: string): Promise<ThreadSnapshot | null>;

  isUniqueViolation(error: unknown): boolean;
  /** Deadlocks and serialization failures: the transaction was rolled back and can run again. */
  isRetryable(error: unknown): boolean;
  /** The PAI tables do not exist yet, i.e. migrateToLatest was not run. */
  isMissingTable(error: unknown): boolean;
}

/** The fields drivers put error codes in: `code` (pg, PGlite, node:sqlite), `errno` (mysql2), `errcode` (node:sqlite). */
export function errorFields(error: unknown): {
  code?: unknown;
  errno?: unknown;
  errcode?: unknown;
  message: string;
} {
  const value = (typeof error === "object" && error !== null ? error : {}) as Record<string, unknown>;
  return {
    code: value.code,
    errno: value.errno,
    errcode: value.errcode,
    message: String(value.message ?? error),
  };
}
