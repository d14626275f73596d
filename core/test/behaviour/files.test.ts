import { defineAgent, defineTool, type FilesV1, type UploadedFile } from "@pai/core";
import { memoryFiles, memoryStorage } from "@pai/storage-memory";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { createTestRuntime } from "../support/test-runtime.js";
import { projectedPart } from "./_helpers.js";

const saveReport = defineTool({
  id: "test.files.save-report.v1",
  description: "Save a CSV report",
  inputSchema: z.object({ rows: z.number() }),
  outputSchema: z.object({ fileId: z.string(), filename: z.string() }),
  execute: async (ctx) => {
    const file = await ctx.files.save({
      body: new TextEncoder().encode(`category,count\nopen,${ctx.input.rows}\n`),
      mediaType: "text/csv",
      filename: "report.csv",
      metadata: { kind: "report" },
    });
    return { fileId: file.fileId, filename: file.filename };
  },
});

const readReport = defineTool({
  id: "test.files.read-report.v1",
  description: "Read a saved file",
  inputSchema: z.object({ fileId: z.string() }),
  execute: async (ctx) => {
    try {
      const file = await ctx.files.read({ fileId: ctx.input.fileId });
      return { text: await file.text(), scopeKey: file.scopeKey };
    } catch (error) {
      return { code: (error as { code?: string }).code ?? "unknown" };
    }
  },
});

function runtimeFor(files: FilesV1, scopeKey: string, userKey: string, script: unknown[]) {
  return createTestRuntime({
    storage: memoryStorage(),
    files,
    identity: { scopeKey, userKey },
    agent: defineAgent({ tools: { saveReport, readReport } }),
    model: script as never,
  });
}

describe("ctx.files", () => {
  it("save injects scope, creator and thread, records size, mediaType and createdAt, and read returns the body", async () => {
    const files = memoryFiles();
    const t = await runtimeFor(files, "tenant-a", "alice", [
      { toolCalls: [{ toolName: "saveReport", toolCallId: "c-save", input: { rows: 3 } }] },
      { text: "Saved." },
    ]);
    const threadId = await t.createThread();
    const snapshot = await t.send(threadId, "save");
    const { fileId } = projectedPart(snapshot, "c-save").output as { fileId: string };

    const head: UploadedFile = await files.head({ scopeKey: "tenant-a", fileId });
    expect(head).toEqual({
      fileId,
      scopeKey: "tenant-a",
      userKey: "alice",
      threadId,
      filename: "report.csv",
      mediaType: "text/csv",
      size: "category,count\nopen,3\n".length,
      metadata: { kind: "report" },
      createdAt: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T/),
    });

    const reader = await runtimeFor(files, "tenant-a", "bob", [
      { toolCalls: [{ toolName: "readReport", toolCallId: "c-read", input: { fileId } }] },
      { text: "Read." },
    ]);
    const otherThread = await reader.createThread();
    const read = await reader.send(otherThread, "read");
    // Providers authorize by scope: another user of the same scope on another thread can read it.
    expect(projectedPart(read, "c-read").output).toEqual({
      text: "category,count\nopen,3\n",
      scopeKey: "tenant-a",
    });
  });

  it("reading a file of another scope is NOT_FOUND", async () => {
    const files = memoryFiles();
    const saved = await files.save({
      scopeKey: "tenant-a",
      userKey: "alice",
      threadId: null,
      body: new TextEncoder().encode("secret"),
      mediaType: "text/plain",
      filename: "secret.txt",
    });
    const t = await runtimeFor(files, "tenant-b", "mallory", [
      { toolCalls: [{ toolName: "readReport", toolCallId: "c-read", input: { fileId: saved.fileId } }] },
      { text: "Nothing." },
    ]);
    const threadId = await t.createThread();
    const snapshot = await t.send(threadId, "read theirs");
    expect(projectedPart(snapshot, "c-read").output).toEqual({ code: "NOT_FOUND" });
  });

  it("tool input cannot choose another scope, creator or thread", async () => {
    const files = memoryFiles();
    const forger = defineTool({
      id: "test.files.forger.v1",
      description: "Tries to save into another tenant",
      inputSchema: z.object({ scopeKey: z.string(), userKey: z.string(), threadId: z.string() }),
      execute: async (ctx) => {
        // Extra fields are ignored: the runtime supplies scope, creator and thread itself.
        const file = await ctx.files.save({
          body: new TextEncoder().encode("x"),
          mediaType: "text/plain",
          filename: "x.txt",
          ...ctx.input,
        } as Parameters<typeof ctx.files.save>[0]);
        return { fileId: file.fileId };
      },
    });
    const t = await createTestRuntime({
      files,
      identity: { scopeKey: "tenant-a", userKey: "alice" },
      agent: defineAgent({ tools: { forger } }),
      model: [
        {
          toolCalls: [
            {
              toolName: "forger",
              toolCallId: "c-forge",
              input: { scopeKey: "tenant-b", userKey: "admin", threadId: "someone-elses" },
            },
          ],
        },
        { text: "Done." },
      ],
    });
    const threadId = await t.createThread();
    const snapshot = await t.send(threadId, "forge");
    const { fileId } = projectedPart(snapshot, "c-forge").output as { fileId: string };

    expect(await files.head({ scopeKey: "tenant-a", fileId })).toMatchObject({
      scopeKey: "tenant-a",
      userKey: "alice",
      threadId,
    });
    await expect(files.head({ scopeKey: "tenant-b", fileId })).rejects.toMatchObject({ code: "NOT_FOUND" });
  });

  it("without a files provider, ctx.files fails the call with a message naming the option", async () => {
    const t = await createTestRuntime({
      onRuntimeError: () => undefined,
      agent: defineAgent({ tools: { saveReport } }),
      model: [
        { toolCalls: [{ toolName: "saveReport", toolCallId: "c-save", input: { rows: 1 } }] },
        { text: "No." },
      ],
    });
    const threadId = await t.createThread();
    const snapshot = await t.send(threadId, "save");
    const part = projectedPart(snapshot, "c-save");
    expect(part.state).toBe("output-error");
    expect(part.errorText).toContain("files");
  });
});
