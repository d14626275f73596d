import { runDispatchConformance } from "@pai/core/testing/conformance";
import { pgBossDispatch } from "@pai/dispatch-pgboss";
import { afterAll } from "vitest";
import { openTestBoss, postgresUrl } from "./postgres.js";

const schema = "pai_boss_conformance";
// Installs the schema once, and deletes the suite's queues afterwards.
const admin = await openTestBoss(schema);
const queues = new Set<string>();

afterAll(async () => {
  if (!admin) return;
  for (const queue of queues) await admin.deleteQueue(queue);
  await admin.stop();
});

runDispatchConformance({
  name: "pg-boss (Postgres)",
  skip: admin === null,
  create: (namespace) => {
    queues.add(namespace);
    // Each dispatch runs its own PgBoss, as separate processes would.
    return pgBossDispatch({
      connectionString: postgresUrl,
      schema,
      queue: namespace,
      pollingIntervalSeconds: 0.5,
    });
  },
});
