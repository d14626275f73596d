import { codeModeTool } from "@pai/code-mode";
import { defineAgent, defineTool } from "@pai/core";
import { createTestRuntime, internalsOf } from "@pai/core/testing";
import { memoryStorage } from "@pai/storage-memory";
import { describe, expect, it } from "vitest";
import { z } from "zod";

const report = defineTool({
  id: "test.report",
  description: "Sales report of one region.",
  inputSchema: z.object({ region: z.string() }),
  outputSchema: z.object({ amount: z.number() }),
  execute: ({ input, fail }) => {
    const amounts: Record<string, number> = { north: 10, south: 20, east: 12 };
    const amount = amounts[input.region];
    if (amount === undefined) return fail(`No region ${input.region}. Known: north, south, east.`);
    return { amount };
  },
});

const secret = defineTool({
  id: "test.secret",
  description: "Not for code mode.",
  inputSchema: z.object({}),
  execute: () => ({ value: "classified" }),
});

function runtimeWith(code: string, limits?: { timeoutMs?: number; memoryBytes?: number }, extra = {}) {
  const program = codeModeTool({ id: "test.code", tools: { report, ...extra }, limits: limits ?? {} });
  return createTestRuntime({
    storage: memoryStorage(),
    agent: defineAgent({ tools: { program, secret } }),
    model: [{ toolCalls: [{ toolName: "program", input: { code }, toolCallId: "p1" }] }, { text: "done" }],
  });
}

async function programPart(code: string, limits?: { timeoutMs?: number; memoryBytes?: number }) {
  const runtime = await runtimeWith(code, limits);
  const threadId = await runtime.createThread();
  await runtime.send(threadId, "run");
  const part = (await runtime.toolParts(threadId)).find((candidate) => candidate.toolCallId === "p1");
  await runtime.close();
  return part as { state: string; output?: { result: unknown; logs: string[] }; errorText?: string };
}

describe("@pai/code-mode", () => {
  it("runs a program that sums three child calls", async () => {
    const part = await programPart(`
      const regions = ["north", "south", "east"];
      const reports = await Promise.all(regions.map((region) => tools.report({ region })));
      console.log("reports", reports.length);
      return reports.reduce((sum, r) => sum + r.amount, 0);
    `);
    expect(part.state).toBe("output-available");
    expect(part.output).toEqual({ result: 42, logs: ["reports 3"] });
  });

  it("stops an infinite loop at the time limit with a model-visible failure", async () => {
    const started = Date.now();
    const part = await programPart("while (true) {}", { timeoutMs: 200 });
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(part.state).toBe("output-error");
    expect(part.errorText).toMatch(/stopped at the time limit of 200 ms/);
  });

  it("stops a program waiting forever at the time limit", async () => {
    const part = await programPart("await new Promise(() => {}); return 1;", { timeoutMs: 200 });
    expect(part.state).toBe("output-error");
    expect(part.errorText).toMatch(/time limit/);
  });

  it("enforces the memory limit", async () => {
    const part = await programPart(
      "const chunks = []; for (;;) chunks.push('x'.repeat(1 << 16) + chunks.length);",
      { memoryBytes: 4 * 1024 * 1024, timeoutMs: 10_000 },
    );
    expect(part.state).toBe("output-error");
    expect(part.errorText).toMatch(/out of memory/);
  });

  it("keeps child validation and failures, and exposes only the declared children", async () => {
    const part = await programPart(`
      const results = [];
      for (const input of [{ region: 5 }, { region: "west" }]) {
        try { await tools.report(input); } catch (error) { results.push(error.message); }
      }
      results.push(typeof tools.secret, typeof require, typeof process, typeof fetch);
      return results;
    `);
    expect(part.state).toBe("output-available");
    const [invalid, failed, ...globals] = (part.output?.result ?? []) as string[];
    expect(invalid).toMatch(/Invalid input for tool report/);
    expect(failed).toBe("No region west. Known: north, south, east.");
    expect(globals).toEqual(["undefined", "undefined", "undefined", "undefined"]);
  });

  it("reports program errors to the model and describes the child tools with their schemas", async () => {
    const runtime = await runtimeWith("throw new TypeError('bad input shape');");
    const threadId = await runtime.createThread();
    await runtime.send(threadId, "run");
    const part = (await runtime.toolParts(threadId))[0];
    expect(part?.state).toBe("output-error");
    expect(part?.errorText).toBe("The program threw: TypeError: bad input shape");
    const call = (
      runtime.model as unknown as { calls: Array<{ tools?: Array<{ name: string; description?: string }> }> }
    ).calls[0];
    const description = call?.tools?.find((tool) => tool.name === "program")?.description ?? "";
    expect(description).toContain("tools.report(input): Sales report of one region.");
    expect(description).toContain('"region":{"type":"string"}');
    expect(description).not.toContain("secret");
    await runtime.close();
  });

  it("cancelling the run aborts the program and its in-flight child calls", async () => {
    let childAborted = false;
    let childStarted!: () => void;
    const started = new Promise<void>((resolve) => {
      childStarted = resolve;
    });
    const slow = defineTool({
      id: "test.slow",
      description: "Waits until cancelled.",
      inputSchema: z.object({}),
      execute: ({ signal }) =>
        new Promise((_, reject) => {
          childStarted();
          signal.addEventListener("abort", () => {
            childAborted = true;
            reject(signal.reason);
          });
        }),
    });
    const program = codeModeTool({ id: "test.code", tools: { slow }, limits: { timeoutMs: 10_000 } });
    const runtime = await createTestRuntime({
      storage: memoryStorage(),
      agent: defineAgent({ tools: { program } }),
      model: [
        {
          toolCalls: [
            { toolName: "program", input: { code: "return await tools.slow({});" }, toolCallId: "p1" },
          ],
        },
      ],
    });
    const threadId = await runtime.createThread();
    await runtime.pai.service.threads.send({ identity: runtime.identity, threadId, message: { text: "go" } });
    await started;
    await internalsOf(runtime.pai).cancelRunOf(threadId, "stop");
    await runtime.waitForIdle(threadId);
    expect(childAborted).toBe(true);
    expect((await runtime.lastRun(threadId))?.status).toBe("cancelled");
    await runtime.close();
  });

  it("rejects children that are not ordinary backend tools", () => {
    const clientOnly = defineTool({ id: "test.client", description: "Client.", inputSchema: z.object({}) });
    expect(() => codeModeTool({ id: "test.code", tools: { clientOnly } })).toThrow(/has no execute/);
    expect(() => codeModeTool({ id: "test.code", tools: { "bad-name": report } })).toThrow(
      /not a JavaScript identifier/,
    );
  });
});
