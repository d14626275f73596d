import { PaiError } from "@pai/core";
import { type Kysely, MysqlAdapter, PostgresAdapter, SqliteAdapter } from "kysely";

/** The SQL families PAI distinguishes; PGlite is Postgres with a single connection. */
export type DialectFamily = "postgres" | "mysql" | "sqlite";

/**
 * Reads the family from the Kysely adapter. Third-party dialects usually extend one of the
 * built-in adapters; for one that does not, pass `dialect` explicitly.
 */
export function detectDialectFamily(db: Kysely<any>, explicit?: DialectFamily): DialectFamily {
  if (explicit) return explicit;
  const adapter = db.getExecutor().adapter;
  if (adapter instanceof PostgresAdapter) return "postgres";
  if (adapter instanceof MysqlAdapter) return "mysql";
  if (adapter instanceof SqliteAdapter) return "sqlite";
  // A second copy of kysely in node_modules breaks instanceof; fall back to the class name.
  const name = adapter.constructor.name.toLowerCase();
  if (name.includes("postgres") || name.includes("pglite")) return "postgres";
  if (name.includes("mysql") || name.includes("maria")) return "mysql";
  if (name.includes("sqlite")) return "sqlite";
  throw new PaiError(
    "INVALID_DEFINITION",
    `@pai/storage-kysely cannot tell the SQL family of the Kysely adapter "${adapter.constructor.name}". Pass \`dialect: "postgres" | "mysql" | "sqlite"\` to kyselyStorage and migrateToLatest.`,
  );
}
