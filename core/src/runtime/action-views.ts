import type { ActionRow } from "../state/rows.js";

/** The reference a tool receives on resume, and clients use to answer. */
export function actionRef(action: ActionRow) {
  return {
    kind: "tool" as const,
    threadId: action.threadId,
    toolName: action.toolName,
    ...(action.suspendName ? { suspendName: action.suspendName } : {}),
    messageId: action.messageId,
    toolCallId: action.toolCallId,
    runId: action.runId,
    actionId: action.actionId,
    name: action.name,
  };
}

/** `ctx.suspendHistory` entries: the suspend input, resolution status and payload. */
export function toSuspendHistoryItem(action: ActionRow) {
  const base = {
    name: action.suspendName ?? action.name,
    suspendedAt: action.createdAt,
    input: action.input,
    ...(action.deadline ? { deadline: action.deadline } : {}),
  };
  switch (action.state) {
    case "submitted":
      return { ...base, status: "submitted" as const, resumedAt: action.resolvedAt, resume: action.resume };
    case "cancelled":
      return {
        ...base,
        status: "cancelled" as const,
        resolvedAt: action.resolvedAt,
        ...(action.reason ? { cancel: { reason: action.reason } } : {}),
      };
    case "failed":
      return {
        ...base,
        status: "failed" as const,
        resolvedAt: action.resolvedAt,
        fail: { message: action.reason ?? "" },
      };
    default:
      return { ...base, status: "pending" as const };
  }
}
