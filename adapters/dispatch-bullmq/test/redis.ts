import { Redis } from "ioredis";

export const redisUrl = process.env.PAI_TEST_REDIS_URL ?? "redis://127.0.0.1:6379";

/** One test file's corner of Redis: every key under `prefix`, deleted by `dispose`. */
export type TestRedis = {
  url: string;
  prefix: string;
  /** A client for assertions; closed by `dispose`. */
  client: Redis;
  dispose(): Promise<void>;
};

/**
 * Redis with a random key prefix for one test file, or null where no server is reachable
 * outside CI (under CI=true a missing server fails the suite).
 */
export async function openTestRedis(label: string): Promise<TestRedis | null> {
  const client = new Redis(redisUrl, {
    lazyConnect: true,
    connectTimeout: 2_000,
    maxRetriesPerRequest: 1,
    retryStrategy: () => null,
  });
  // ioredis rejects `connect` with a bare "Connection is closed"; the cause comes as an event.
  let lastError: unknown;
  client.on("error", (error) => {
    lastError = error;
  });
  try {
    await client.connect();
    await client.ping();
  } catch (error) {
    client.disconnect();
    if (process.env.CI === "true") {
      throw new Error(`Redis is required under CI=true (${redisUrl}): ${String(lastError ?? error)}`);
    }
    return null;
  }
  const prefix = `pai-test-${label}-${Math.random().toString(36).slice(2, 8)}`;
  return {
    url: redisUrl,
    prefix,
    client,
    dispose: async () => {
      await deleteKeys(client, `${prefix}:*`);
      await client.quit();
    },
  };
}

async function deleteKeys(client: Redis, pattern: string): Promise<void> {
  let cursor = "0";
  do {
    const [next, keys] = await client.scan(cursor, "MATCH", pattern, "COUNT", 500);
    if (keys.length > 0) await client.unlink(...keys);
    cursor = next;
  } while (cursor !== "0");
}
