import type { ActionRow } from "@pai/core";

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
  };
}
