import type { ActionRow, ThreadSnapshot } from "@pai/core";
import type { UIMessage } from "ai";
import { actionData } from "./run-chunks.js";

/**
 * A thread's stored messages as a chat that followed its streams holds them: tool data as
 * `data-<channel>` parts, pending approvals in the SDK's `approval-requested` state, other
 * suspensions as `data-pai-action` parts. A page loads these as `useChat({ messages })`, so a
 * reload shows what the live chat showed.
 */
export function chatMessages(
  snapshot: ThreadSnapshot,
  isApproval: (action: ActionRow) => boolean,
): UIMessage[] {
  return snapshot.messages.map((row) => {
    const message = structuredClone(row.message) as UIMessage;
    if (message.role !== "assistant") return message;
    const calls = new Set<string>();
    message.parts = message.parts.map((part) => {
      const toolCallId = (part as { toolCallId?: string }).toolCallId;
      if (!toolCallId) return part;
      calls.add(toolCallId);
      const approval = snapshot.actions.find(
        (action) => action.toolCallId === toolCallId && action.state === "pending" && isApproval(action),
      );
      return approval
        ? ({ ...part, state: "approval-requested", approval: { id: approval.actionId } } as never)
        : part;
    });
    for (const item of snapshot.toolData) {
      if (!calls.has(item.toolCallId)) continue;
      message.parts.push({
        type: `data-${item.channel}`,
        id: `${item.toolCallId}:${item.itemId}`,
        data: item.value,
      } as never);
    }
    for (const action of snapshot.actions) {
      if (action.kind !== "suspend" || !calls.has(action.toolCallId) || isApproval(action)) continue;
      message.parts.push({ type: "data-pai-action", id: action.actionId, data: actionData(action) } as never);
    }
    return message;
  });
}
