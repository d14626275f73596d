import { defineAgent, defineTool, PaiError } from "@pai/core";
import { projectThreadState } from "@pai/core/protocol";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { createTestRuntime } from "../support/test-runtime.js";
import { scripted, toolResultFor } from "./_helpers.js";

const runBrowserCheck = defineTool({
  id: "test.run-browser-check.v1",
  description: "Ask an external browser worker to inspect a page",
  inputSchema: z.object({ url: z.string().url() }),
  outputSchema: z.object({ status: z.enum(["passed", "failed"]), notes: z.string().optional() }),
});

async function setup(onOutput?: (args: any) => void) {
  const t = await createTestRuntime({
    agent: defineAgent({
      tools: { runBrowserCheck: onOutput ? { tool: runBrowserCheck, onOutput } : runBrowserCheck },
    }),
    model: [
      {
        toolCalls: [
          {
            toolName: "runBrowserCheck",
            toolCallId: "call-browser-1",
            input: { url: "https://example.com/" },
          },
        ],
      },
      { text: "The page passed." },
    ],
  });
  const threadId = await t.createThread();
  const waiting = await t.send(threadId, "check the page");
  return { t, threadId, waiting };
}

describe("client-routed tools", () => {
  it("a model call to a tool without execute creates the implicit tool.output action", async () => {
    const { threadId, waiting } = await setup();

    expect(waiting.runs.at(-1)?.status).toBe("waiting");
    expect(waiting.actions).toHaveLength(1);
    expect(waiting.actions[0]).toMatchObject({
      actionId: "call-browser-1",
      toolCallId: "call-browser-1",
      name: "runBrowserCheck.output",
      kind: "output",
      suspendName: null,
      input: { url: "https://example.com/" },
      state: "pending",
    });
    const [pending] = projectThreadState(waiting).pending;
    expect(pending).toMatchObject({
      name: "runBrowserCheck.output",
      input: { url: "https://example.com/" },
      ref: {
        actionId: "call-browser-1",
        toolCallId: "call-browser-1",
        toolName: "runBrowserCheck",
        threadId,
      },
    });
    expect(pending!.origin).not.toHaveProperty("suspendName");
  });

  it("a submission that fails outputSchema is rejected and the action keeps waiting", async () => {
    const { t, threadId, waiting } = await setup();
    let error: unknown;
    try {
      await t.pai.service.actions.submit({
        identity: t.identity,
        threadId,
        actionId: "call-browser-1",
        payload: { status: "maybe" },
      });
    } catch (caught) {
      error = caught;
    }
    expect(PaiError.isInstance(error) && error.code).toBe("INVALID_INPUT");
    expect((error as PaiError).issues?.[0]?.path).toEqual(["status"]);
    await t.waitForIdle(threadId);
    expect(await t.snapshot(threadId)).toEqual(waiting);
  });

  it("after a valid submission the part holds the output and the run continues", async () => {
    const { t, threadId } = await setup();
    const done = await t.submit(threadId, "runBrowserCheck.output", {
      status: "passed",
      notes: "No errors.",
    });

    const [part] = await t.toolParts(threadId);
    expect(part).toMatchObject({
      type: "tool-runBrowserCheck",
      state: "output-available",
      output: { status: "passed", notes: "No errors." },
    });
    expect(toolResultFor(scripted(t), 1, "call-browser-1").output).toEqual({
      type: "json",
      value: { status: "passed", notes: "No errors." },
    });
    expect(done.actions[0]).toMatchObject({
      state: "submitted",
      resume: { status: "passed", notes: "No errors." },
    });
    expect(done.runs.at(-1)?.status).toBe("completed");
    expect(await t.lastText(threadId)).toBe("The page passed.");
  });

  it("onOutput of a client-routed tool sees the submitted output once validated", async () => {
    const seen: unknown[] = [];
    const { t, threadId } = await setup(({ input, output, call, tool }) =>
      seen.push({ input, output, call, tool }),
    );
    await t.submit(threadId, "runBrowserCheck.output", { status: "failed" });

    expect(seen).toEqual([
      {
        input: { url: "https://example.com/" },
        output: { status: "failed" },
        call: { toolCallId: "call-browser-1" },
        tool: { name: "runBrowserCheck" },
      },
    ]);
  });
});
