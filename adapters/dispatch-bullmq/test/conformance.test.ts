import { runDispatchConformance } from "@pai/core/testing/conformance";
import { bullMqDispatch } from "@pai/dispatch-bullmq";
import { afterAll } from "vitest";
import { openTestRedis } from "./redis.js";

const redis = await openTestRedis("conformance");

afterAll(async () => {
  await redis?.dispose();
});

runDispatchConformance({
  name: "BullMQ (Redis)",
  skip: redis === null,
  // The namespace is the queue name; the file's random prefix keeps runs apart and is deleted afterwards.
  create: (namespace) =>
    bullMqDispatch({
      connection: redis!.url,
      queue: namespace,
      prefix: redis!.prefix,
      stalledIntervalMs: 2_000,
    }),
});
