import type { AgentContract, ToolName } from "./agent-contract.js";

export type ThreadId = string;
export type RunId = string;
export type MessageId = string;
export type ToolCallId = string;

/** Ties a pending action to the open assistant message and native tool call that created it. */
export type PendingActionOrigin<TContract = AgentContract> = {
  kind: "tool";
  threadId: ThreadId;
  /** Registration name; may name a tool no longer in the current contract. */
  toolName: ToolName<TContract> | (string & Record<never, never>);
  suspendName?: string;
  messageId: MessageId;
  toolCallId: ToolCallId;
  runId: RunId;
};

/** A pending action's identity. */
export type PendingActionRef<TContract = AgentContract> = PendingActionOrigin<TContract> & {
  /** Suspension data identity, or the toolCallId for client/manual output. */
  actionId: string;
  /** Fully qualified name: `tool.suspendName` or `tool.output`. */
  name: string;
};
