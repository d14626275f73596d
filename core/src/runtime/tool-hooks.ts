import { getErrorMessage, PaiError } from "../errors/pai-error.js";
import { normalizeJson } from "../json/json-value.js";
import type { ToolOutcome } from "../state/transitions.js";
import type {
  AfterToolResultResult,
  RuntimeAgentDefinition,
  RuntimeHooks,
  RuntimeResolverArgs,
  RuntimeToolRegistration,
} from "./definition-shapes.js";

/**
 * The hook path every settled call takes, top-level or child: `afterToolResult` (the runtime's,
 * then the agent's with its plugins) may replace the result, then `onOutput` observes an
 * output. A throwing hook is a value here (`HookFailure`), never an exception crossing layers:
 * the caller decides that it fails the run.
 */

export type HookFailure = { type: "hook-failed"; hook: "afterToolResult" | "onOutput"; error: unknown };

export type CallIdentity = {
  toolName: string;
  toolCallId: string;
  /** Set for a child call: the top-level call that made it. */
  parent?: { toolName: string; toolCallId: string };
};

/** Whether any `afterToolResult` hook applies (callers skip the hook path, and its promise, without one). */
export function hasAfterToolResult(hooks: {
  agent: RuntimeAgentDefinition;
  runtime: RuntimeHooks | undefined;
}): boolean {
  return Boolean(hooks.runtime?.afterToolResult || hooks.agent.lifecycle?.afterToolResult);
}

/** Applies `afterToolResult` hooks to a settled result. */
export async function applyAfterToolResult(
  hooks: { agent: RuntimeAgentDefinition; runtime: RuntimeHooks | undefined },
  call: CallIdentity & { input: unknown; result: AfterToolResultResult; args: RuntimeResolverArgs },
): Promise<{ type: "result"; result: AfterToolResultResult } | HookFailure> {
  const chain = [hooks.runtime?.afterToolResult, hooks.agent.lifecycle?.afterToolResult].filter(
    (hook) => hook !== undefined,
  );
  let result = call.result;
  for (const hook of chain) {
    try {
      const replaced = await hook({
        ...call.args,
        toolName: call.toolName,
        name: call.toolName,
        toolCallId: call.toolCallId,
        ...(call.parent ? { parent: call.parent } : {}),
        input: call.input,
        result,
      });
      if (replaced) result = replaced;
    } catch (error) {
      return { type: "hook-failed", hook: "afterToolResult", error };
    }
  }
  return { type: "result", result };
}

/** Runs a registration's `onOutput` observer for a committed output. */
export async function observeOutput(
  registration: RuntimeToolRegistration | undefined,
  call: CallIdentity & { input: unknown; output: unknown; args: RuntimeResolverArgs },
): Promise<HookFailure | null> {
  if (!registration?.onOutput) return null;
  try {
    await registration.onOutput({
      ...call.args,
      input: call.input,
      output: call.output,
      tool: { name: call.toolName },
      call: { toolCallId: call.toolCallId },
    });
    return null;
  } catch (error) {
    return { type: "hook-failed", hook: "onOutput", error };
  }
}

/** The model-visible text of an unexpected tool exception: the agent's `mapError`, else the runtime's. */
export function mapToolError(
  hooks: { agent: RuntimeAgentDefinition; runtime: RuntimeHooks | undefined },
  input: CallIdentity & { error: unknown },
): string | undefined {
  const args = {
    error: input.error,
    toolName: input.toolName,
    toolCallId: input.toolCallId,
    ...(input.parent ? { parent: input.parent } : {}),
  };
  return hooks.agent.mapError?.(args) ?? hooks.runtime?.mapError?.(args);
}

/** The error a hook failure is reported as (full detail for `onRuntimeError`; clients see a redacted text). */
export function hookFailureError(failure: HookFailure): PaiError {
  return new PaiError("INTERNAL", `${failure.hook} threw: ${getErrorMessage(failure.error)}`, {
    cause: failure.error,
  });
}

/** A hook result as a tool outcome, normalized to bounded JSON (a value that is not JSON becomes an error). */
export function toOutcome(
  result: AfterToolResultResult,
  label: string,
  limits?: Parameters<typeof normalizeJson>[2],
): ToolOutcome {
  if (result.type === "error") return result;
  if (result.output === undefined) return { type: "output", output: undefined };
  try {
    return { type: "output", output: normalizeJson(result.output, label, limits) };
  } catch (error) {
    return { type: "error", errorText: getErrorMessage(error) };
  }
}
