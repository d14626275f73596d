import { randomUUID } from "node:crypto";
import { runFilesConformance } from "@pai/core/testing/conformance";
import { afterAll, beforeAll } from "vitest";
import { s3Files } from "../src/index.js";
import { type S3rverFixture, startS3rver } from "./s3rver-fixture.js";

let s3: S3rverFixture;

beforeAll(async () => {
  s3 = await startS3rver();
});

afterAll(async () => {
  await s3?.[Symbol.asyncDispose]();
});

runFilesConformance({
  name: "s3 (s3rver)",
  // A fresh prefix per test keeps runs apart inside the one bucket.
  create: () => s3Files({ client: s3.client, bucket: s3.bucket, prefix: `conformance/${randomUUID()}` }),
});

runFilesConformance({
  name: "s3 (s3rver, presign enabled, no prefix)",
  create: () => s3Files({ client: s3.client, bucket: s3.bucket, presign: { expiresInSeconds: 60 } }),
  largeBodyBytes: 1024 * 1024,
});
