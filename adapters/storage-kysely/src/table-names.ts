// Physical table names derived from the user's table prefix.
import { PaiError } from "@pai/core";

/** Physical table names for one table prefix. */
export type TableNames = {
  threads: string;
  messages: string;
  runs: string;
  actions: string;
  toolData: string;
  threadEvents: string;
  files: string;
  migrations: string;
  migrationLock: string;
};

export const DEFAULT_TABLE_PREFIX = "pai_";

/** Resolves and validates a prefix: it is spliced into identifiers, so only `[A-Za-z0-9_]` is allowed. */
export function tableNames(prefix: string = DEFAULT_TABLE_PREFIX): TableNames {
  if (!/^[A-Za-z0-9_]*$/.test(prefix) || prefix.length > 40) {
    throw new PaiError(
      "INVALID_DEFINITION",
      `Invalid tablePrefix "${prefix}": use at most 40 letters, digits or underscores (for example "pai_").`,
    );
  }
  return {
    threads: `${prefix}threads`,
    messages: `${prefix}messages`,
    runs: `${prefix}runs`,
    actions: `${prefix}actions`,
    toolData: `${prefix}tool_data`,
    threadEvents: `${prefix}thread_events`,
    files: `${prefix}files`,
    migrations: `${prefix}kysely_migration`,
    migrationLock: `${prefix}kysely_migration_lock`,
  };
}
