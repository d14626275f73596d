// The public API of @pai/storage-kysely.
export type { GroupCommitsOptions } from "./commit-groups.js";
export type { DialectFamily } from "./dialect-family.js";
export { detectDialectFamily } from "./dialect-family.js";
export type { KyselyStorage, KyselyStorageOptions } from "./kysely-storage.js";
export { kyselyStorage } from "./kysely-storage.js";
export type { MigrateOptions } from "./migrations.js";
export { migrateToLatest, PAI_MIGRATION_NAMES } from "./migrations.js";
export { createNodeSqliteDialect } from "./node-sqlite-dialect.js";
export { createPgliteDialect } from "./pglite-dialect.js";
export type { PostgresNotifierOptions, PostgresNotifierPool } from "./postgres-notifier.js";
export { postgresNotifier } from "./postgres-notifier.js";
export type { TableNames } from "./table-names.js";
export { DEFAULT_TABLE_PREFIX, tableNames } from "./table-names.js";
