import { PaiError } from "@pai/core";
import { runFilesConformance } from "@pai/core/testing/conformance";
import { describe, expect, it } from "vitest";
import { memoryFiles } from "../src/memory-files.js";

// Each test gets a fresh provider; `close` (the default dispose) drops its contents.
runFilesConformance({ name: "memory", create: () => memoryFiles() });

describe("memoryFiles options", () => {
  it("uses the injected clock for createdAt", async () => {
    const files = memoryFiles({ now: () => new Date("2030-01-02T03:04:05.000Z") });
    const saved = await files.save({
      scopeKey: "s",
      userKey: null,
      threadId: null,
      body: new Uint8Array([1]),
      mediaType: "application/octet-stream",
      filename: "a.bin",
    });
    expect(saved.createdAt).toBe("2030-01-02T03:04:05.000Z");
  });

  it("rejects bodies over maxFileBytes with PAYLOAD_TOO_LARGE and stores nothing", async () => {
    const files = memoryFiles({ maxFileBytes: 4 });
    const error = await files
      .save({
        scopeKey: "s",
        userKey: null,
        threadId: null,
        body: new Uint8Array(5),
        mediaType: "application/octet-stream",
        filename: "big.bin",
      })
      .catch((caught: unknown) => caught);
    expect(PaiError.isInstance(error) && error.code).toBe("PAYLOAD_TOO_LARGE");
    const ok = await files.save({
      scopeKey: "s",
      userKey: null,
      threadId: null,
      body: new Uint8Array(4),
      mediaType: "application/octet-stream",
      filename: "ok.bin",
    });
    expect(ok.size).toBe(4);
  });
});
