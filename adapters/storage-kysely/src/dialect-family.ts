// Tells which SQL family a Kysely instance speaks and picks that family's strategy: the one
// place that looks at the engine; everything else asks the strategy.
import { PaiError } from "@pai/core";
import { type Kysely, MysqlAdapter, PostgresAdapter, SqliteAdapter } from "kysely";
import { mysqlFamily } from "./families/mysql.js";
import { pgliteFamily } from "./families/pglite.js";
import { postgresFamily } from "./families/postgres.js";
import type { SqlFamily } from "./families/sql-family.js";
import { sqliteFamily } from "./families/sqlite.js";

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

/** The strategy for a Kysely instance's engine. */
export function pickSqlFamily(db: Kysely<any>, explicit?: DialectFamily): SqlFamily {
  switch (detectDialectFamily(db, explicit)) {
    case "postgres":
      // A Postgres adapter that allows only one connection is an embedded engine (Kysely's
      // PGliteAdapter, as built by createPgliteDialect): the database lives in this process.
      // Asking the adapter, not its class name, also holds for a second copy of kysely.
      return db.getExecutor().adapter.supportsMultipleConnections === false ? pgliteFamily : postgresFamily;
    case "mysql":
      return mysqlFamily;
    case "sqlite":
      return sqliteFamily;
  }
}
