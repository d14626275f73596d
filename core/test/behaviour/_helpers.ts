import { PaiError, type ThreadSnapshot } from "@pai/core";
import { projectThreadState } from "@pai/core/protocol";
import type { ScriptedModel, TestRuntime } from "@pai/core/testing";

/** A promise with its resolver, for tests that must act while a tool or hook is running. */
export function deferred<T = void>() {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((done) => {
    resolve = done;
  });
  return { promise, resolve };
}

/** The PaiError a promise rejects with; fails the test when it resolves or throws something else. */
export async function rejection(promise: Promise<unknown>): Promise<PaiError> {
  try {
    await promise;
  } catch (error) {
    if (PaiError.isInstance(error)) return error;
    throw error;
  }
  throw new Error("Expected the call to be rejected.");
}

/** The scripted model of a test runtime created from a script. */
export function scripted(runtime: TestRuntime<any>): ScriptedModel {
  return runtime.model as ScriptedModel;
}

/** Names of the tools offered to the model in its `callIndex`-th call (0-based), sorted. */
export function toolNamesInCall(model: ScriptedModel, callIndex: number): string[] {
  const call = model.calls[callIndex];
  if (!call) throw new Error(`The model was called ${model.calls.length} times, not ${callIndex + 1}.`);
  return (call.tools ?? []).map((tool) => tool.name).sort();
}

/** The function tool `name` as offered in the model's `callIndex`-th call. */
export function offeredTool(model: ScriptedModel, callIndex: number, name: string) {
  const tool = model.calls[callIndex]?.tools?.find((candidate) => candidate.name === name);
  if (tool?.type !== "function") {
    throw new Error(`Model call #${callIndex + 1} was not offered a function tool named ${name}.`);
  }
  return tool;
}

type PromptToolResult = { type: "tool-result"; toolCallId: string; toolName: string; output: any };

/** The tool result for one call id the model received in its `callIndex`-th call. */
export function toolResultFor(model: ScriptedModel, callIndex: number, toolCallId: string): PromptToolResult {
  const call = model.calls[callIndex];
  if (!call) throw new Error(`The model was called ${model.calls.length} times, not ${callIndex + 1}.`);
  const found = call.prompt
    .flatMap((message) => (message.role === "tool" ? message.content : []))
    .find((part) => part.type === "tool-result" && part.toolCallId === toolCallId);
  if (!found) throw new Error(`Model call #${callIndex + 1} received no tool result for ${toolCallId}.`);
  return found as PromptToolResult;
}

/** The projected (client-view) tool part of one call, with its PAI sidecars. */
export function projectedPart(snapshot: ThreadSnapshot, toolCallId: string): Record<string, any> {
  const part = projectThreadState(snapshot)
    .messages.flatMap((message) => message.parts)
    .find((candidate) => (candidate as { toolCallId?: string }).toolCallId === toolCallId);
  if (!part) throw new Error(`No tool part for ${toolCallId}.`);
  return part as Record<string, any>;
}

/** Polls `check` until it returns true (or fails after `timeoutMs`). */
export async function eventually(check: () => boolean | Promise<boolean>, timeoutMs = 2_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error("The condition did not become true in time.");
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}
