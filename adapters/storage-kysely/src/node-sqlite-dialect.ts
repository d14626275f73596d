// A Kysely dialect over Node's built-in node:sqlite, so SQLite needs no native addon.
import type { DatabaseSync, SQLInputValue } from "node:sqlite";
import {
  CompiledQuery,
  type DatabaseConnection,
  type DatabaseIntrospector,
  type Dialect,
  type DialectAdapter,
  type Driver,
  type Kysely,
  type QueryCompiler,
  type QueryResult,
  SqliteAdapter,
  SqliteIntrospector,
  SqliteQueryCompiler,
  type TransactionSettings,
} from "kysely";

/** node:sqlite binds numbers, bigints, strings, null and bytes only. */
function toSqliteValue(value: unknown): SQLInputValue {
  if (value === undefined || value === null) return null;
  if (typeof value === "boolean") return value ? 1 : 0;
  if (value instanceof Date) return value.toISOString();
  if (typeof value === "number" || typeof value === "bigint" || typeof value === "string") return value;
  if (ArrayBuffer.isView(value)) return value as NodeJS.ArrayBufferView;
  // Objects reach here only from untyped callers; store them the way a JSON column expects.
  return JSON.stringify(value);
}

/** Integers come back as bigint when the database was opened with `readBigInts`; keep safe ones as numbers. */
function toSafeNumbers(row: Record<string, unknown>): Record<string, unknown> {
  for (const key in row) {
    const value = row[key];
    if (
      typeof value === "bigint" &&
      value <= BigInt(Number.MAX_SAFE_INTEGER) &&
      value >= BigInt(Number.MIN_SAFE_INTEGER)
    ) {
      row[key] = Number(value);
    }
  }
  return row;
}

class NodeSqliteConnection implements DatabaseConnection {
  constructor(private readonly database: DatabaseSync) {}

  async executeQuery<R>(compiledQuery: CompiledQuery): Promise<QueryResult<R>> {
    const statement = this.database.prepare(compiledQuery.sql);
    const parameters = compiledQuery.parameters.map(toSqliteValue);
    // A statement that yields columns (SELECT, or DML with RETURNING) is read with all().
    if (statement.columns().length > 0) {
      return { rows: statement.all(...parameters).map(toSafeNumbers) as R[] };
    }
    const { changes, lastInsertRowid } = statement.run(...parameters);
    return { rows: [], numAffectedRows: BigInt(changes), insertId: BigInt(lastInsertRowid) };
  }

  async *streamQuery<R>(compiledQuery: CompiledQuery): AsyncIterableIterator<QueryResult<R>> {
    const statement = this.database.prepare(compiledQuery.sql);
    for (const row of statement.iterate(...compiledQuery.parameters.map(toSqliteValue))) {
      yield { rows: [toSafeNumbers(row as Record<string, unknown>) as R] };
    }
  }
}

/** FIFO lock: node:sqlite has one connection, so a transaction must own it until it ends. */
class ConnectionLock {
  private tail: Promise<void> = Promise.resolve();
  private release: (() => void) | null = null;

  async acquire(): Promise<void> {
    const previous = this.tail;
    let release!: () => void;
    this.tail = new Promise<void>((resolve) => {
      release = resolve;
    });
    await previous;
    this.release = release;
  }

  unlock(): void {
    const release = this.release;
    this.release = null;
    release?.();
  }
}

class NodeSqliteDriver implements Driver {
  private readonly lock = new ConnectionLock();
  private readonly connection: NodeSqliteConnection;

  constructor(database: DatabaseSync) {
    this.connection = new NodeSqliteConnection(database);
  }

  async init(): Promise<void> {}

  async acquireConnection(): Promise<DatabaseConnection> {
    await this.lock.acquire();
    return this.connection;
  }

  async beginTransaction(connection: DatabaseConnection, settings: TransactionSettings): Promise<void> {
    // Writers take the write lock up front so two processes sharing a file never deadlock on upgrade.
    const begin = settings.accessMode === "read only" ? "begin" : "begin immediate";
    await connection.executeQuery(CompiledQuery.raw(begin));
  }

  async commitTransaction(connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw("commit"));
  }

  async rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw("rollback"));
  }

  async releaseConnection(): Promise<void> {
    this.lock.unlock();
  }

  async destroy(): Promise<void> {
    // The DatabaseSync belongs to the caller, who opened it and closes it.
  }
}

/**
 * A Kysely dialect over Node's built-in `node:sqlite` `DatabaseSync` (Node >= 22.16), so SQLite
 * needs no native addon. The database stays owned by the caller: `db.destroy()` does not close it.
 *
 * @example
 * const db = new Kysely<any>({ dialect: createNodeSqliteDialect(new DatabaseSync("pai.db")) });
 */
export function createNodeSqliteDialect(database: DatabaseSync): Dialect {
  return {
    createAdapter: (): DialectAdapter => new SqliteAdapter(),
    createDriver: (): Driver => new NodeSqliteDriver(database),
    createQueryCompiler: (): QueryCompiler => new SqliteQueryCompiler(),
    createIntrospector: (db: Kysely<any>): DatabaseIntrospector => new SqliteIntrospector(db),
  };
}
