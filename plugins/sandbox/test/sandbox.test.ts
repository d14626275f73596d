import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { defineAgent, defineTool } from "@pai/core";
import { createTestRuntime } from "@pai/core/testing";
import { justBashBackend, type SandboxBackend, sandbox, sandboxBinding, sandboxPlugin } from "@pai/sandbox";
import { memoryStorage } from "@pai/storage-memory";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";

const shell = defineTool({
  id: "test.shell",
  description: "Run a command in this conversation's sandbox.",
  inputSchema: z.object({ command: z.string() }),
  capabilities: { sandbox },
  execute: (ctx) => ctx.capabilities.sandbox.runCommand({ command: ctx.input.command }),
});

const agent = defineAgent({ tools: { shell } });

/** The just-bash backend, counting sandboxes created and disposed. */
function countingBackend() {
  const inner = justBashBackend();
  const counts = { created: 0, disposed: 0 };
  const backend: SandboxBackend = {
    name: "counting",
    create: async (context) => {
      counts.created++;
      const session = await inner.create(context);
      return { ...session, dispose: () => void counts.disposed++ };
    },
  };
  return { backend, counts };
}

const shellCall = (command: string, toolCallId: string) => ({
  toolCalls: [{ toolName: "shell", input: { command }, toolCallId }],
});

async function outputOf(
  runtime: Awaited<ReturnType<typeof createTestRuntime>>,
  threadId: string,
  id: string,
) {
  const part = (await runtime.toolParts(threadId)).find((candidate) => candidate.toolCallId === id);
  return part?.output as {
    stdout: string;
    stderr: string;
    exitCode: number;
    timedOut: boolean;
    truncated: boolean;
  };
}

describe("@pai/sandbox", () => {
  let hostDir: string;
  beforeAll(async () => {
    hostDir = await mkdtemp(join(tmpdir(), "pai-sandbox-host-"));
    await writeFile(join(hostDir, "secret.txt"), "host secret");
  });
  afterAll(async () => {
    await rm(hostDir, { recursive: true, force: true });
  });

  it("keeps files between tool calls and runs of one thread, not across threads", async () => {
    const { backend, counts } = countingBackend();
    const runtime = await createTestRuntime({
      storage: memoryStorage(),
      agent,
      plugins: [sandboxPlugin({ backend })],
      model: [
        shellCall("echo hello > note.txt", "w1"),
        shellCall("cat note.txt", "r1"),
        { text: "written" },
        // The same thread, a later run.
        shellCall("cat /workspace/note.txt", "r2"),
        { text: "read again" },
        // Another thread of the same scope.
        shellCall("cat note.txt", "r3"),
        { text: "other thread" },
      ],
    });
    const first = await runtime.createThread();
    await runtime.send(first, "write");
    expect((await outputOf(runtime, first, "r1")).stdout).toBe("hello\n");
    await runtime.send(first, "read again");
    expect((await outputOf(runtime, first, "r2")).stdout).toBe("hello\n");
    expect(counts.created).toBe(1);

    const second = await runtime.createThread();
    await runtime.send(second, "read from another thread");
    const other = await outputOf(runtime, second, "r3");
    expect(other.exitCode).not.toBe(0);
    expect(other.stderr).toMatch(/No such file/);
    expect(counts.created).toBe(2);

    await runtime.close();
    expect(counts.disposed).toBe(2);
  });

  it("gives the same thread id in another scope its own sandbox", async () => {
    const binding = sandboxBinding();
    const signal = new AbortController().signal;
    const at = (scopeKey: string) => ({
      capabilityId: sandbox.id,
      scopeKey,
      threadId: "t1",
      resourceKey: `${sandbox.id}:${scopeKey}:t1`,
      signal,
    });
    const mine = await binding.acquire(at("scope-a"));
    const theirs = await binding.acquire(at("scope-b"));
    await mine.writeFile({ path: "/workspace/private.txt", content: "a" });
    expect((await mine.runCommand({ command: "cat private.txt" })).stdout).toBe("a");
    const leaked = await theirs.runCommand({ command: "cat private.txt" });
    expect(leaked.exitCode).not.toBe(0);
    await binding.release?.(mine, at("scope-a"));
    await binding.release?.(theirs, at("scope-b"));
  });

  it("cannot read or write the host filesystem", async () => {
    const runtime = await createTestRuntime({
      storage: memoryStorage(),
      agent,
      plugins: [sandboxPlugin()],
      model: [
        shellCall(`cat ${join(hostDir, "secret.txt")}`, "read"),
        shellCall(
          `echo pwned > ${join(hostDir, "secret.txt")}; echo made > ${join(hostDir, "new.txt")}`,
          "write",
        ),
        shellCall("ls /", "ls"),
        { text: "done" },
      ],
    });
    const threadId = await runtime.createThread();
    await runtime.send(threadId, "try");
    const read = await outputOf(runtime, threadId, "read");
    expect(read.stdout).not.toContain("host secret");
    expect(read.exitCode).not.toBe(0);
    expect(await readFile(join(hostDir, "secret.txt"), "utf8")).toBe("host secret");
    await expect(readFile(join(hostDir, "new.txt"), "utf8")).rejects.toThrow(/ENOENT/);
    const listing = (await outputOf(runtime, threadId, "ls")).stdout.split("\n");
    expect(listing).not.toContain("home");
    expect(listing).not.toContain("etc");
    await runtime.close();
  });

  it("stops commands at the time limit and cuts output at the byte limit", async () => {
    const runtime = await createTestRuntime({
      storage: memoryStorage(),
      agent,
      plugins: [sandboxPlugin({ limits: { timeoutMs: 300, maxOutputBytes: 100 } })],
      model: [shellCall("while true; do :; done", "loop"), shellCall("seq 1 1000", "big"), { text: "done" }],
    });
    const threadId = await runtime.createThread();
    const started = Date.now();
    await runtime.send(threadId, "go");
    expect(Date.now() - started).toBeLessThan(5_000);
    const loop = await outputOf(runtime, threadId, "loop");
    expect(loop.exitCode).toBe(124);
    expect(loop.timedOut).toBe(true);
    const big = await outputOf(runtime, threadId, "big");
    expect(big.truncated).toBe(true);
    expect(big.stdout.startsWith("1\n2\n3\n")).toBe(true);
    expect(big.stdout).toMatch(/\[output truncated: \d+ more bytes\]$/);
    await runtime.close();
  });

  it("disposes a thread's sandbox after the idle timeout and starts fresh on next use", async () => {
    const { backend, counts } = countingBackend();
    const runtime = await createTestRuntime({
      storage: memoryStorage(),
      agent,
      plugins: [sandboxPlugin({ backend, idleTimeoutMs: 50 })],
      model: [
        shellCall("echo x > kept.txt", "w"),
        { text: "ok" },
        shellCall("cat kept.txt", "r"),
        { text: "ok" },
      ],
    });
    const threadId = await runtime.createThread();
    await runtime.send(threadId, "write");
    expect(counts).toEqual({ created: 1, disposed: 0 });
    await new Promise((resolve) => setTimeout(resolve, 150));
    expect(counts).toEqual({ created: 1, disposed: 1 });
    await runtime.send(threadId, "read");
    expect((await outputOf(runtime, threadId, "r")).exitCode).not.toBe(0);
    expect(counts.created).toBe(2);
    await runtime.close();
  });

  it("reads and writes files through the facade", async () => {
    const files = defineTool({
      id: "test.files",
      description: "Write then read a file.",
      inputSchema: z.object({ path: z.string() }),
      capabilities: { box: sandbox },
      execute: async ({ input, capabilities }) => {
        await capabilities.box.writeFile({ path: input.path, content: "data" });
        const content = await capabilities.box.readFile({ path: input.path });
        const missing = await capabilities.box
          .readFile({ path: "/missing" })
          .catch((error: Error) => error.message);
        return { content, missing };
      },
    });
    const runtime = await createTestRuntime({
      storage: memoryStorage(),
      agent: defineAgent({ tools: { files } }),
      plugins: [sandboxPlugin()],
      model: [
        { toolCalls: [{ toolName: "files", input: { path: "/a/b.txt" }, toolCallId: "f" }] },
        { text: "ok" },
      ],
    });
    const threadId = await runtime.createThread();
    await runtime.send(threadId, "go");
    const part = (await runtime.toolParts(threadId))[0];
    expect(part?.output).toEqual({ content: "data", missing: expect.stringMatching(/no file \/missing/) });
    await runtime.close();
  });
});
