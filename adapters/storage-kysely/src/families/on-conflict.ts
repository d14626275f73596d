// The standard `INSERT ... ON CONFLICT` clauses, shared by the Postgres and SQLite families
// (MySQL/MariaDB have their own `ON DUPLICATE KEY UPDATE`, see mysql.ts).
import { sql } from "kysely";
import { type UpsertRule, upsertAssignments } from "../commit-plan.js";
import type { Insert } from "./sql-family.js";

export function onConflictUpsert(insert: Insert, table: string, rule: UpsertRule): Insert {
  const set = Object.fromEntries(
    upsertAssignments(
      rule,
      (column) => sql.ref(`excluded.${column}`),
      // The stored row's value; `excluded.` is the row that failed to insert.
      (column) => sql.ref(`${table}.${column}`),
    ),
  );
  return insert.onConflict((conflict) => conflict.columns(rule.keys).doUpdateSet(set));
}

export function onConflictIgnore(insert: Insert, keys: string[]): Insert {
  return insert.onConflict((conflict) => conflict.columns(keys).doNothing());
}
