import { defineTool, type WatchEvent } from "@pai/core";
import type { ScriptedModel, TestRuntime } from "@pai/core/testing";
import { z } from "zod";

export { rejection } from "../behaviour/_helpers.js";

/** A tool that waits for approval at its `approval` point and answers with the resume value. */
export const approvalTool = defineTool({
  id: "test.approve.v1",
  description: "Ask for approval",
  inputSchema: z.object({ summary: z.string() }),
  outputSchema: z.object({ approved: z.boolean() }),
  suspend: {
    approval: {
      suspendSchema: z.object({ prompt: z.string() }),
      resumeSchema: z.object({ approved: z.boolean() }),
    },
  },
  execute: (ctx: any) =>
    ctx.entry.type === "initial" ? ctx.suspend("approval", { prompt: ctx.input.summary }) : ctx.entry.resume,
});

/** A promise with its resolver, for tests that must act while a tool is running. */
export function deferred<T = void>() {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((done) => {
    resolve = done;
  });
  return { promise, resolve };
}

type PromptToolResult = { type: "tool-result"; toolCallId: string; toolName: string; output: any };

/** The tool results the model received in its `callIndex`-th call (0-based). */
export function toolResultsInCall(model: ScriptedModel, callIndex: number): PromptToolResult[] {
  const call = model.calls[callIndex];
  if (!call) throw new Error(`The model was called ${model.calls.length} times, not ${callIndex + 1}.`);
  return call.prompt.flatMap((message) =>
    message.role === "tool"
      ? (message.content.filter((part) => part.type === "tool-result") as PromptToolResult[])
      : [],
  );
}

/** The tool result for one call id the model received in its `callIndex`-th call. */
export function toolResultFor(model: ScriptedModel, callIndex: number, toolCallId: string): PromptToolResult {
  const found = toolResultsInCall(model, callIndex).find((part) => part.toolCallId === toolCallId);
  if (!found) {
    throw new Error(`Model call #${callIndex + 1} received no tool result for ${toolCallId}.`);
  }
  return found;
}

/** The model of a test runtime created from a script. */
export function scripted(runtime: TestRuntime<any>): ScriptedModel {
  return runtime.model as ScriptedModel;
}

/** A clock that stands still until `set` moves it (deadlines and schedules fall due on cue). */
export function handClock(start = "2030-01-07T08:00:00.000Z") {
  let now = Date.parse(start);
  return {
    clock: () => new Date(now),
    set: (iso: string) => {
      now = Date.parse(iso);
    },
  };
}

/** A clock that advances one second per reading, so every timestamp is distinct and ordered. */
export function steppingClock(start = Date.parse("2030-01-01T00:00:00.000Z")) {
  let now = start;
  return () => {
    now += 1000;
    return new Date(now);
  };
}

/**
 * Watches a thread from `afterVersion` in the background, handing every event to `onEvent`;
 * `stop()` aborts the watch and waits until it has ended.
 */
export function watchInBackground(
  runtime: TestRuntime<any>,
  threadId: string,
  afterVersion: number,
  onEvent: (event: WatchEvent) => void,
): { stop(): Promise<void> } {
  const controller = new AbortController();
  const consumer = (async () => {
    for await (const event of runtime.pai.service.threads.watch({
      identity: runtime.identity,
      threadId,
      afterVersion,
      signal: controller.signal,
    }))
      onEvent(event);
  })();
  return {
    async stop() {
      controller.abort();
      await consumer;
    },
  };
}
