import type { StoredMessage } from "./rows.js";

/** A native AI SDK tool part as PAI stores it (static `tool-<name>` or `dynamic-tool`). */
export type StoredToolPart = {
  type: string;
  toolCallId: string;
  toolName?: string;
  state: string;
  input?: unknown;
  output?: unknown;
  errorText?: string;
  [key: string]: unknown;
};

/** True for native tool parts (`tool-<name>` and `dynamic-tool`). */
export function isStoredToolPart(part: { type: string }): part is StoredToolPart {
  return part.type === "dynamic-tool" || part.type.startsWith("tool-");
}

/** The tool name of a native tool part, static or dynamic. */
export function toolNameOfPart(part: StoredToolPart): string {
  return part.type === "dynamic-tool" ? String(part.toolName) : part.type.slice("tool-".length);
}

/** Finds a tool part by call id in a message. */
export function findToolPart(
  message: StoredMessage,
  toolCallId: string,
): { part: StoredToolPart; index: number } | null {
  for (let index = 0; index < message.parts.length; index++) {
    const part = message.parts[index] as { type: string };
    if (isStoredToolPart(part) && part.toolCallId === toolCallId) return { part, index };
  }
  return null;
}

/** Whether a part still waits for an outcome. */
export function isUnsettledToolPart(part: StoredToolPart): boolean {
  return part.state === "input-available" || part.state === "input-streaming";
}
