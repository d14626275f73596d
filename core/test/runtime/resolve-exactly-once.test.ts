import { type ActionResult, defineAgent, defineTool, PaiError } from "@pai/core";
import { createTestRuntime } from "@pai/core/testing";
import { memoryStorage } from "@pai/storage-memory";
import { describe, expect, it } from "vitest";
import { z } from "zod";

/**
 * Focused, deterministic reproductions of what the runtime model test
 * (`runtime-model.property.test.ts`) checks for concurrent resolutions of one action: exactly
 * one request wins, only the winner's answer is observed (onOutput, afterToolResult), a loser
 * gets CONFLICT whatever its observer would have done, and requests carrying the winner's
 * idempotency key get the winner's result even while the winner is still in flight.
 */

const pick = defineTool({
  id: "test.exactly-once.pick.v1",
  description: "Let the client pick an option",
  inputSchema: z.object({ options: z.array(z.string()) }),
  outputSchema: z.object({ choice: z.string() }),
});

/** Suspends at `approval`; on resume returns the resume payload. `entries` records each entry. */
function approveTool(entries: string[]) {
  return defineTool({
    id: "test.exactly-once.approve.v1",
    description: "Ask for approval",
    inputSchema: z.object({ summary: z.string() }),
    outputSchema: z.object({ answer: z.string() }),
    suspend: {
      approval: {
        suspendSchema: z.object({ prompt: z.string() }),
        resumeSchema: z.object({ answer: z.string() }),
      },
    },
    execute: (ctx) => {
      entries.push(ctx.entry.type);
      return ctx.entry.type === "initial"
        ? ctx.suspend("approval", { prompt: ctx.input.summary })
        : ctx.entry.resume;
    },
  });
}

type Seen = { hook: "onOutput" | "afterToolResult"; toolCallId: string; value: unknown };

async function setup(toolName: "pick" | "approve", options: { onOutput?: (seen: Seen[]) => void } = {}) {
  const seen: Seen[] = [];
  const entries: string[] = [];
  const onOutput = ({ output, call }: { output: unknown; call: { toolCallId: string } }) => {
    seen.push({ hook: "onOutput", toolCallId: call.toolCallId, value: output });
    options.onOutput?.(seen);
  };
  const t = await createTestRuntime({
    storage: memoryStorage(),
    onRuntimeError: () => undefined,
    agent: defineAgent({
      tools: {
        pick: { tool: pick, onOutput },
        approve: { tool: approveTool(entries), onOutput },
      },
      lifecycle: {
        afterToolResult: ({ toolCallId, result }) => {
          seen.push({ hook: "afterToolResult", toolCallId, value: result });
        },
      },
    }),
    model: [
      {
        toolCalls:
          toolName === "pick"
            ? [{ toolName: "pick", toolCallId: "call-pick", input: { options: ["a", "b"] } }]
            : [{ toolName: "approve", toolCallId: "call-approve", input: { summary: "Ship v2" } }],
      },
      { text: "Done." },
    ],
  });
  const threadId = await t.createThread();
  const waiting = await t.send(threadId, "go");
  const action = waiting.actions[0]!;
  expect(action.state).toBe("pending");
  const submit = (payload: unknown, idempotencyKey?: string) =>
    t.pai.service.actions.submit({
      identity: t.identity,
      threadId,
      actionId: action.actionId,
      payload,
      ...(idempotencyKey ? { idempotencyKey } : {}),
    });
  return { t, threadId, action, seen, entries, submit };
}

/** `hook call-id value` per observed call: compact diffs. */
function calls(seen: Seen[]): string[] {
  return seen.map((call) => `${call.hook} ${call.toolCallId} ${JSON.stringify(call.value)}`);
}

function codes(settled: PromiseSettledResult<ActionResult>[]): string[] {
  return settled.map((result) =>
    result.status === "fulfilled"
      ? "accepted"
      : PaiError.isInstance(result.reason)
        ? result.reason.code
        : `non-PaiError: ${String(result.reason)}`,
  );
}

describe("resolving an action exactly once", () => {
  it("10 concurrent submits of an output action: 1 accepted, 9 CONFLICT, and onOutput / afterToolResult see only the winner's payload, once", async () => {
    const { t, threadId, action, seen, submit } = await setup("pick");
    const payloads = Array.from({ length: 10 }, (_, index) => ({ choice: `choice-${index}` }));

    const settled = await Promise.allSettled(payloads.map((payload) => submit(payload)));
    await t.waitForIdle(threadId);

    const result = codes(settled);
    expect(result.filter((code) => code === "accepted")).toHaveLength(1);
    expect(result.filter((code) => code !== "accepted")).toEqual(Array(9).fill("CONFLICT"));
    const winner = payloads[result.indexOf("accepted")]!;
    expect(calls(seen)).toEqual(
      calls([
        { hook: "afterToolResult", toolCallId: action.toolCallId, value: { type: "output", output: winner } },
        { hook: "onOutput", toolCallId: action.toolCallId, value: winner },
      ]),
    );
    const done = await t.snapshot(threadId);
    expect(done.actions[0]).toMatchObject({ state: "submitted", resume: winner });
    expect(done.runs.at(-1)?.status).toBe("completed");
    await t.close();
  });

  it("a losing submit whose onOutput would throw still gets CONFLICT (not INTERNAL), and the winner's run completes", async () => {
    // The observer throws on any call after the first: it must only ever run for the winner.
    const { t, threadId, seen, submit } = await setup("pick", {
      onOutput: (calls) => {
        if (calls.filter((call) => call.hook === "onOutput").length > 1) {
          throw new Error("onOutput ran for a request that did not win");
        }
      },
    });

    const settled = await Promise.allSettled(
      Array.from({ length: 10 }, (_, index) => submit({ choice: `choice-${index}` })),
    );
    await t.waitForIdle(threadId);

    const result = codes(settled);
    expect(result.filter((code) => code !== "accepted")).toEqual(Array(9).fill("CONFLICT"));
    expect(result.filter((code) => code === "accepted")).toHaveLength(1);
    expect(calls(seen.filter((call) => call.hook === "onOutput"))).toHaveLength(1);
    expect((await t.snapshot(threadId)).runs.at(-1)?.status).toBe("completed");
    await t.close();
  });

  it("10 concurrent submits of an output action with one idempotency key all succeed with the same result", async () => {
    const { t, threadId, action, seen, submit } = await setup("pick");
    const payload = { choice: "b" };

    const settled = await Promise.allSettled(Array.from({ length: 10 }, () => submit(payload, "submit-1")));
    await t.waitForIdle(threadId);

    expect(codes(settled)).toEqual(Array(10).fill("accepted"));
    const results = settled.map((result) => (result as PromiseFulfilledResult<ActionResult>).value);
    for (const result of results) expect(result).toEqual(results[0]);
    expect(results[0]!.action).toMatchObject({
      state: "submitted",
      resume: payload,
      idempotencyKey: "submit-1",
    });
    // A later retry with the winner's key gets the winner's result too.
    expect(await submit(payload, "submit-1")).toEqual(results[0]);
    expect(calls(seen)).toEqual(
      calls([
        {
          hook: "afterToolResult",
          toolCallId: action.toolCallId,
          value: { type: "output", output: payload },
        },
        { hook: "onOutput", toolCallId: action.toolCallId, value: payload },
      ]),
    );
    await t.close();
  });

  it("10 concurrent submits of a suspension with one idempotency key all succeed with the same result and resume the tool once", async () => {
    const { t, threadId, seen, entries, submit } = await setup("approve");
    const payload = { answer: "yes" };

    const settled = await Promise.allSettled(Array.from({ length: 10 }, () => submit(payload, "resume-1")));
    await t.waitForIdle(threadId);

    expect(codes(settled)).toEqual(Array(10).fill("accepted"));
    const results = settled.map((result) => (result as PromiseFulfilledResult<ActionResult>).value);
    for (const result of results) expect(result).toEqual(results[0]);
    expect(entries).toEqual(["initial", "resume"]);
    expect(calls(seen)).toEqual(
      calls([
        { hook: "afterToolResult", toolCallId: "call-approve", value: { type: "output", output: payload } },
        { hook: "onOutput", toolCallId: "call-approve", value: payload },
      ]),
    );
    await t.close();
  });

  it("a submit racing the run's cancellation: its observers run if and only if it was accepted", async () => {
    const { t, threadId, action, seen, submit } = await setup("pick");

    const [submitted, cancelled] = await Promise.allSettled([
      submit({ choice: "a" }),
      t.pai.service.threads.cancel({ identity: t.identity, threadId, reason: "stop" }),
    ]);
    await t.waitForIdle(threadId);

    expect(cancelled.status).toBe("fulfilled");
    const stored = (await t.snapshot(threadId)).actions.find((row) => row.actionId === action.actionId)!;
    if (submitted.status === "fulfilled") {
      expect(stored).toMatchObject({ state: "submitted", resume: { choice: "a" } });
      expect(calls(seen)).toEqual(
        calls([
          {
            hook: "afterToolResult",
            toolCallId: action.toolCallId,
            value: { type: "output", output: { choice: "a" } },
          },
          { hook: "onOutput", toolCallId: action.toolCallId, value: { choice: "a" } },
        ]),
      );
    } else {
      expect(PaiError.isInstance(submitted.reason) && submitted.reason.code).toBe("CONFLICT");
      expect(stored.state).toBe("cancelled");
      expect(calls(seen), "a submit that lost to the cancel must not have been observed").toEqual([]);
    }
    await t.close();
  });
});
