import type { ToolFailure } from "../errors/tool-failure.js";
import type { DeadlineInput, SuspendOptions } from "./deadline.js";
import type { SuspendName, ToolContract } from "./tool-contract.js";

/**
 * Marks the plain objects `ctx.suspend()` and `ctx.fail()` return, so the runtime can tell
 * them apart from ordinary tool output. `Symbol.for` keeps the marker stable across
 * duplicate installs of the package.
 */
export const TOOL_RESULT_KIND: unique symbol = Symbol.for("pai.tool-result") as never;

/** Returned by `ctx.suspend(name, input)`: pause the call at a named, typed wait point. */
export type ToolSuspendResult<
  TContract extends ToolContract = ToolContract,
  TName extends SuspendName<TContract> = SuspendName<TContract>,
> = {
  readonly [TOOL_RESULT_KIND]: "suspend";
  /** Suspend point name, local to the tool. */
  readonly name: TName;
  /** Parsed-type payload exposed to clients while waiting (validated by `suspendSchema`). */
  readonly input: TContract["suspend"][TName]["input"];
  /** Set when the call chose its own deadline (`null`: none), overriding the point's. */
  readonly deadline?: DeadlineInput | null;
};

/** Returned by `ctx.fail(message)`: a deliberate, model-visible failure. */
export type ToolFailResult = {
  readonly [TOOL_RESULT_KIND]: "fail";
  readonly message: ToolFailure;
};

/** Builds the marker `ctx.suspend` returns. The runtime validates `input` and the deadline later. */
export function createSuspendResult<TName extends string, TInput>(
  name: TName,
  input: TInput,
  options?: SuspendOptions,
): {
  readonly [TOOL_RESULT_KIND]: "suspend";
  readonly name: TName;
  readonly input: TInput;
  readonly deadline?: DeadlineInput | null;
} {
  // Untyped callers may pass anything as options; only an explicit deadline (or null) counts.
  const deadline = typeof options === "object" && options !== null ? options.deadline : undefined;
  return deadline === undefined
    ? { [TOOL_RESULT_KIND]: "suspend", name, input }
    : { [TOOL_RESULT_KIND]: "suspend", name, input, deadline };
}

/** Builds the marker `ctx.fail` returns. */
export function createFailResult(message: ToolFailure): ToolFailResult {
  return { [TOOL_RESULT_KIND]: "fail", message };
}

function kindOf(value: unknown): unknown {
  return typeof value === "object" && value !== null
    ? (value as Record<symbol, unknown>)[TOOL_RESULT_KIND]
    : undefined;
}

/**
 * True for a value produced by `ctx.suspend` / `createSuspendResult`. Only the marker is checked:
 * a malformed name (untyped JS) is the runtime's to refuse with a model-visible error.
 */
export function isSuspendResult(value: unknown): value is ToolSuspendResult {
  return kindOf(value) === "suspend";
}

/** True for a value produced by `ctx.fail` / `createFailResult` (a non-string message reads as the default failure). */
export function isFailResult(value: unknown): value is ToolFailResult {
  return kindOf(value) === "fail";
}
