// The Postgres strategy (a server shared by many processes): jsonb columns, "C" collation, and
// every commit and thread read as ONE statement (see postgres-statements.ts for why).
import { sql } from "kysely";
import { commitGroups } from "../commit-groups.js";
import { postgresCommit, postgresCommitGroup, postgresLoadThread } from "../postgres-statements.js";
import { currentVersion } from "../transactional-statements.js";
import { onConflictIgnore, onConflictUpsert } from "./on-conflict.js";
import { errorFields, type SqlFamily } from "./sql-family.js";

/** SQLSTATE unique_violation: a duplicate primary or unique key. */
export const PG_UNIQUE_VIOLATION = "23505";
/** SQLSTATE serialization_failure: the transaction lost a race with a concurrent one. */
export const PG_SERIALIZATION_FAILURE = "40001";
/** SQLSTATE deadlock_detected: the server aborted one side of a lock cycle. */
export const PG_DEADLOCK_DETECTED = "40P01";
/** SQLSTATE undefined_table. */
export const PG_UNDEFINED_TABLE = "42P01";

export const postgresFamily: SqlFamily = {
  dialect: "postgres",
  engine: "postgres",
  capabilities: { sharedAcrossProcesses: true, listenNotify: true },
  namedStatements: true,

  // Ids and stamps use the "C" collation: the default one is locale-aware, which would break
  // keyset cursors that assume JavaScript string order.
  columnTypes: {
    id: sql`text collate "C"`,
    stamp: sql`varchar(40) collate "C"`,
    json: "jsonb",
    text: "text",
    short: sql`varchar(32) collate "C"`,
    int: "integer",
    bigint: "bigint",
  },
  createIndexIfNotExists: true,
  partialIndexes: true,
  // Written as JSON text (cast to jsonb by the server); read back already parsed by the driver.
  json: { encode: (value) => JSON.stringify(value), decode: (value) => value },

  upsert: onConflictUpsert,
  ignoreConflict: onConflictIgnore,

  groupCommits: (scope, options) =>
    commitGroups(options, {
      one: async (input, plan) => (await postgresCommit(scope, input, plan)).version,
      group: (commits) => postgresCommitGroup(scope, commits),
    }),

  async commit(scope, input, plan) {
    const version = scope.commitGroups
      ? await scope.commitGroups.commit(input, plan)
      : (await postgresCommit(scope, input, plan)).version;
    if (version !== null) return { ok: true, version };
    // The guard matched nothing: read the version as it is now (the rare path).
    return {
      ok: false,
      reason: "conflict",
      currentVersion: await currentVersion(scope.db, scope.tables, input.threadId),
    };
  },
  loadThread: postgresLoadThread,

  isUniqueViolation: (error) => errorFields(error).code === PG_UNIQUE_VIOLATION,
  isRetryable: (error) => {
    const { code } = errorFields(error);
    return code === PG_DEADLOCK_DETECTED || code === PG_SERIALIZATION_FAILURE;
  },
  isMissingTable: (error) => errorFields(error).code === PG_UNDEFINED_TABLE,
};
