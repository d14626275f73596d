import type { ActionDeadline, ActionRow } from "@pai/core";

/** A pending suspension as a `data-pai-action` part carries it. */
export type PaiActionData = {
  actionId: string;
  toolCallId: string;
  toolName: string;
  /** `tool.point`. */
  name: string;
  suspendName: string | null;
  input: unknown;
  state: ActionRow["state"];
  /** When the action resolves by itself if nobody answers (a UI can count down to `at`), or null. */
  deadline: ActionDeadline | null;
};

export function actionData(action: ActionRow): PaiActionData {
  return {
    actionId: action.actionId,
    toolCallId: action.toolCallId,
    toolName: action.toolName,
    name: action.name,
    suspendName: action.suspendName,
    input: action.input,
    state: action.state,
    deadline: action.deadline ?? null,
  };
}
