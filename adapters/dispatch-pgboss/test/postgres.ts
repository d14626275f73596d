import { type ConstructorOptions, PgBoss } from "pg-boss";

export const postgresUrl = process.env.PAI_TEST_POSTGRES_URL ?? "postgres://postgres@127.0.0.1:5432/test";

/**
 * A started PgBoss on `schema` (installing it, so the dispatches a test opens next do not race to),
 * or null where no server is reachable outside CI: under CI=true a missing server fails the suite.
 */
export async function openTestBoss(
  schema: string,
  options: Omit<ConstructorOptions, "connectionString" | "schema"> = {},
): Promise<PgBoss | null> {
  const boss = new PgBoss({
    connectionString: postgresUrl,
    schema,
    connectionTimeoutMillis: 5_000,
    ...options,
  });
  boss.on("error", () => undefined);
  try {
    await boss.start();
  } catch (error) {
    await boss.stop({ graceful: false }).catch(() => undefined);
    if (process.env.CI === "true") {
      throw new Error(`Postgres is required under CI=true (${postgresUrl}): ${String(error)}`);
    }
    return null;
  }
  return boss;
}

/** A queue name no other test run uses. */
export function uniqueQueue(label: string): string {
  return `pai_${label}_${globalThis.crypto.randomUUID().replaceAll("-", "").slice(0, 12)}`;
}

export async function until(check: () => boolean, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`Timed out after ${timeoutMs} ms waiting for ${what}.`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}
