import { DatabaseSync } from "node:sqlite";
import type { AgentLike, StorageV1 } from "@pai/core";
import {
  createTestRuntime as createCoreTestRuntime,
  type TestRuntime,
  type TestRuntimeOptions,
} from "@pai/core/testing";
import {
  createNodeSqliteDialect,
  createPgliteDialect,
  kyselyStorage,
  migrateToLatest,
} from "@pai/storage-kysely";
import { memoryStorage } from "@pai/storage-memory";
import { Kysely } from "kysely";

/**
 * The storage the runtime and behaviour suites run on: memory, or the SQL engine named by
 * `PAI_TEST_STORAGE` (`npm run test:sqlite`, `npm run test:pglite`), so the same files also
 * prove the behaviour on a real database. It lives here, not in `@pai/core/testing`, because
 * core must not load an adapter package.
 */
export async function openTestStorage(): Promise<{ storage: StorageV1; dispose(): Promise<void> }> {
  const engine = process.env.PAI_TEST_STORAGE;
  if (!engine) return { storage: memoryStorage(), dispose: async () => undefined };
  if (engine !== "sqlite" && engine !== "pglite") {
    throw new Error(`PAI_TEST_STORAGE=${engine}: expected sqlite or pglite.`);
  }
  const dialect =
    engine === "sqlite"
      ? createNodeSqliteDialect(new DatabaseSync(":memory:"))
      : // Loaded only when asked for: PGlite starts a WebAssembly Postgres.
        createPgliteDialect(new (await import("@electric-sql/pglite")).PGlite());
  const db = new Kysely<any>({ dialect });
  await migrateToLatest(db);
  return { storage: kyselyStorage({ db }), dispose: () => db.destroy() };
}

/**
 * `createTestRuntime` on the suite's storage unless the test passes its own; `close()` then also
 * closes the storage it opened.
 */
export async function createTestRuntime<const TAgent extends AgentLike>(
  options: Omit<TestRuntimeOptions<TAgent>, "agent" | "storage"> & { agent: TAgent; storage?: StorageV1 },
): Promise<TestRuntime<TAgent>> {
  if (options.storage) return createCoreTestRuntime({ ...options, storage: options.storage });
  const owned = await openTestStorage();
  const runtime = await createCoreTestRuntime({ ...options, storage: owned.storage });
  return {
    ...runtime,
    close: async () => {
      try {
        await runtime.close();
      } finally {
        await owned.dispose();
      }
    },
  };
}
