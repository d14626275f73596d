import type { ActionRow, MessageRow, RunRow, ThreadRow, ToolDataRow } from "./rows.js";

/**
 * Durable thread events. Each one carries the full new row it writes, so storage can
 * persist a commit in O(size of the change) and a watcher rebuilds exactly the state a
 * fresh load returns ("live equals reload" by construction).
 */
export type ThreadEvent =
  | { type: "thread-updated"; thread: ThreadRow }
  | { type: "message-upserted"; message: MessageRow }
  | { type: "run-upserted"; run: RunRow }
  | { type: "action-upserted"; action: ActionRow }
  | { type: "tool-data-upserted"; item: ToolDataRow };

/** One committed version of a thread: all events written atomically by one commit. */
export type StoredThreadEvents = {
  threadId: string;
  version: number;
  events: ThreadEvent[];
  createdAt: string;
};

/** Transient events: delivered to live watchers only, never stored. */
export type LiveEvent =
  | {
      type: "text-delta" | "reasoning-delta";
      threadId: string;
      runId: string;
      messageId: string;
      delta: string;
      /** The model's id of the text or reasoning block (one stored part per block), and its step. */
      blockId?: string;
      step?: number;
    }
  | {
      type: "tool-input-available";
      threadId: string;
      runId: string;
      messageId: string;
      toolCallId: string;
      toolName: string;
      input: unknown;
    }
  | { type: "tool-data-transient"; item: ToolDataRow }
  | { type: "step-started"; threadId: string; runId: string; step: number };
