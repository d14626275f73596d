import { PaiError } from "../errors/pai-error.js";

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
    `getToolName: part of type "${part.type}" is not a tool part. Check it with isPaiToolPart(part) first.`,
  );
}

/**
 * True for native AI SDK tool parts (`tool-<name>` or `dynamic-tool` with a toolCallId),
 * the parts PAI projects its sidecars onto. Narrows a message part union accordingly.
 */
export function isPaiToolPart<TPart>(
  part: TPart,
): part is Extract<TPart, { type: `tool-${string}` } | { type: "dynamic-tool" }> {
  if (typeof part !== "object" || part === null) return false;
  const { type, toolCallId, toolName } = part as { type?: unknown; toolCallId?: unknown; toolName?: unknown };
  if (typeof type !== "string" || typeof toolCallId !== "string") return false;
  if (type === "dynamic-tool") return typeof toolName === "string";
  return type.startsWith("tool-") && type.length > "tool-".length;
}
