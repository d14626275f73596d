/**
 * Runtime markers for what `ctx.suspend(...)` and `ctx.fail(...)` return. They are plain
 * data (never thrown), so control flow stays in return values.
 */
export const TOOL_RESULT_MARKER = Symbol.for("pai.tool-result");

export type SuspendMarker = { [TOOL_RESULT_MARKER]: "suspend"; name: string; input: unknown };
export type FailMarker = { [TOOL_RESULT_MARKER]: "fail"; message: string };

export function suspendMarker(name: string, input: unknown): SuspendMarker {
  return { [TOOL_RESULT_MARKER]: "suspend", name, input };
}

export function failMarker(message: string): FailMarker {
  return { [TOOL_RESULT_MARKER]: "fail", message };
}

export function isSuspendMarker(value: unknown): value is SuspendMarker {
  return (
    typeof value === "object" && value !== null && (value as SuspendMarker)[TOOL_RESULT_MARKER] === "suspend"
  );
}

export function isFailMarker(value: unknown): value is FailMarker {
  return typeof value === "object" && value !== null && (value as FailMarker)[TOOL_RESULT_MARKER] === "fail";
}
