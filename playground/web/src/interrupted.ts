import { ABANDONED_TEXT, INTERRUPTED_TEXT } from "@pai/core";
import type { ProjectedMessage } from "@pai/core/protocol";
import type { ToolRenderState } from "@pai/react";
import { RETRYABLE_TOOLS } from "../../server/retry-policy.js";

/**
 * What a call's error text reads when the server stopped while it ran: after a crash, recovery
 * records INTERRUPTED_TEXT; a graceful shutdown (`pai.close()`, Ctrl-C on `npm start`) aborts the
 * call, which then ends with ABANDONED_TEXT (docs/deployment.md, "Graceful shutdown"). A cancel by
 * a person ends as `cancelled` instead, so an `error` with either text was the server's doing.
 *
 * Whether a tool call failed only because the server stopped while it ran. */
export function isInterrupted(state: ToolRenderState, errorText: string | undefined): boolean {
  return state === "error" && (errorText === INTERRUPTED_TEXT || errorText === ABANDONED_TEXT);
}

/** Whether the playground offers "Retry" for this failed call (see RETRYABLE_TOOLS). */
export function canRetry(toolName: string, state: ToolRenderState, errorText: string | undefined): boolean {
  return RETRYABLE_TOOLS.has(toolName) && isInterrupted(state, errorText);
}

type Turn = Pick<ProjectedMessage, "id" | "role" | "parts">;

const textOf = (message: Turn) =>
  message.parts
    .map((part) => (part.type === "text" ? (part as { text: string }).text : ""))
    .join("")
    .trim();

/**
 * The user's words that led to the call in `messageId`, to send again; null once the user has
 * spoken since (the conversation moved on, and a retry would answer an old question).
 */
export function retryTurn(messages: readonly Turn[], messageId: string): string | null {
  const index = messages.findIndex((message) => message.id === messageId);
  if (index < 0) return null;
  if (messages.slice(index + 1).some((message) => message.role === "user")) return null;
  const asked = messages
    .slice(0, index)
    .reverse()
    .find((message) => message.role === "user");
  const text = asked ? textOf(asked) : "";
  return text || null;
}
