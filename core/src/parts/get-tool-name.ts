import { PaiError } from "../errors/pai-error.js";
import { isToolPart } from "./is-tool-part.js";

type ToolPartLike = { readonly type: string; readonly toolName?: string };

/**
 * The tool name of a native tool part: `tool-<name>` parts carry it in `type`,
 * `dynamic-tool` parts in `toolName`. Use it instead of assuming a `toolName` field,
 * also for parts whose name is no longer registered.
 */
export function getToolName(part: ToolPartLike): string {
  if (part.type === "dynamic-tool") {
    if (typeof part.toolName === "string") return part.toolName;
  } else if (part.type.startsWith("tool-") && part.type.length > "tool-".length) {
    return part.type.slice("tool-".length);
  }
  throw new PaiError(
    "INVALID_INPUT",
    `getToolName: part of type "${part.type}" is not a tool part. Check it with isToolPart(part) first.`,
  );
}

/**
 * True for native AI SDK tool parts (`tool-<name>` or `dynamic-tool` with a toolCallId),
 * the parts PAI projects its sidecars onto. Narrows a message part union accordingly.
 *
 * @deprecated Use `isToolPart(part, name)` to narrow to one tool's parts, or `isToolPart(part)`
 * for any tool part. Narrowing a typed message part with `if (isPaiToolPart(part))` costs
 * type-check time quadratic in the agent's tool count (over a minute at 200 tools). As an
 * array callback (`parts.filter(isPaiToolPart)`) it stays cheap.
 */
// Kept as it was for that callback form: `filter`/`find` need a generic predicate that is a
// subset of the element type, and `isToolPart(part)`'s small asserted type is not.
export function isPaiToolPart<TPart>(
  part: TPart,
): part is Extract<TPart, { type: `tool-${string}` } | { type: "dynamic-tool" }> {
  return isToolPart(part);
}
