import { DatabaseSync } from "node:sqlite";
import { PGlite } from "@electric-sql/pglite";
import { Kysely, MysqlDialect, PostgresDialect, sql } from "kysely";
import { createPool } from "mysql2";
import pg from "pg";
import { createNodeSqliteDialect, createPgliteDialect, tableNames } from "../../src/index.js";

export type EngineName = "pglite" | "sqlite" | "postgres" | "mysql";

/** A Kysely instance on one engine plus a table prefix no other test file or run uses. */
export type TestEngine = {
  name: EngineName;
  db: Kysely<any>;
  prefix: string;
  /** Drops this prefix's tables and closes the connections. */
  dispose(): Promise<void>;
};

const serverUrls = {
  postgres: { env: "PAI_TEST_POSTGRES_URL", fallback: "postgres://postgres@127.0.0.1:5432/test" },
  mysql: { env: "PAI_TEST_MYSQL_URL", fallback: "mysql://root@127.0.0.1:3306/test" },
} as const;

export function uniquePrefix(label: string): string {
  return `pai_${label}_${globalThis.crypto.randomUUID().slice(0, 8)}_`;
}

function createDb(name: EngineName, url: string): Kysely<any> {
  switch (name) {
    case "pglite":
      return new Kysely({ dialect: createPgliteDialect(new PGlite()) });
    case "sqlite":
      return new Kysely({ dialect: createNodeSqliteDialect(new DatabaseSync(":memory:")) });
    case "postgres":
      return new Kysely({
        dialect: new PostgresDialect({ pool: new pg.Pool({ connectionString: url, max: 10 }) }),
      });
    case "mysql":
      return new Kysely({
        dialect: new MysqlDialect({ pool: createPool({ uri: url, connectionLimit: 10 }) }),
      });
  }
}

async function dropTables(db: Kysely<any>, prefix: string): Promise<void> {
  for (const table of Object.values(tableNames(prefix))) {
    await db.schema.dropTable(table).ifExists().execute();
  }
}

/**
 * Opens an engine, or returns a reason to skip when its server is unreachable outside CI.
 * Under `CI=true` an unreachable server throws, so the suite fails instead of skipping.
 */
export async function openEngine(name: EngineName, label: string): Promise<TestEngine | { skip: string }> {
  const url =
    name === "postgres" || name === "mysql"
      ? (process.env[serverUrls[name].env] ?? serverUrls[name].fallback)
      : "";
  const db = createDb(name, url);
  try {
    await sql`select 1`.execute(db);
  } catch (error) {
    await db.destroy().catch(() => {});
    const variable = serverUrls[name as "postgres" | "mysql"].env;
    const message = `${name} at ${url} is unreachable (${(error as Error).message}); set ${variable} or start the server`;
    if (process.env.CI === "true") throw new Error(message);
    console.warn(`[storage-kysely] skipping ${label}: ${message}`);
    return { skip: message };
  }
  const prefix = uniquePrefix(label);
  return {
    name,
    db,
    prefix,
    async dispose() {
      await dropTables(db, prefix);
      await db.destroy();
    },
  };
}
