import {
  type ActionRow,
  commitLeaseProblem,
  type MessageRow,
  PaiError,
  type RunRow,
  type StorageCommit,
  type ThreadRow,
  type ToolDataRow,
} from "@pai/core";

/** The rows one commit writes: the last event per key wins, ordered by each key's first event. */
export type CommitPlan = {
  thread: ThreadRow | null;
  messages: MessageRow[];
  runs: RunRow[];
  actions: ActionRow[];
  toolData: ToolDataRow[];
};

function lastWins<T>(map: Map<string, T>, key: string, row: T): void {
  // Map.set on an existing key keeps its original position, which is what insertion order needs.
  map.set(key, row);
}

/** Validates a commit and reduces its events to the rows it writes. */
export function planCommit(input: StorageCommit): CommitPlan {
  const { threadId, expectedVersion, events } = input;
  if (!Number.isInteger(expectedVersion) || expectedVersion < 0) {
    throw new PaiError(
      "INVALID_INPUT",
      `expectedVersion must be a non-negative integer, got ${expectedVersion}.`,
    );
  }
  let thread: ThreadRow | null = null;
  const messages = new Map<string, MessageRow>();
  const runs = new Map<string, RunRow>();
  const actions = new Map<string, ActionRow>();
  const toolData = new Map<string, ToolDataRow>();
  const owned = (rowThreadId: string, what: string) => {
    if (rowThreadId !== threadId) {
      throw new PaiError(
        "INVALID_INPUT",
        `A ${what} event of thread "${rowThreadId}" was committed to thread "${threadId}"; commit each thread's events separately.`,
      );
    }
  };
  for (const event of events) {
    switch (event.type) {
      case "thread-updated":
        owned(event.thread.threadId, event.type);
        thread = event.thread;
        break;
      case "message-upserted":
        owned(event.message.threadId, event.type);
        lastWins(messages, event.message.messageId, event.message);
        break;
      case "run-upserted":
        owned(event.run.threadId, event.type);
        lastWins(runs, event.run.runId, event.run);
        break;
      case "action-upserted":
        owned(event.action.threadId, event.type);
        lastWins(actions, event.action.actionId, event.action);
        break;
      case "tool-data-upserted":
        owned(event.item.threadId, event.type);
        lastWins(
          toolData,
          JSON.stringify([event.item.toolCallId, event.item.channel, event.item.itemId]),
          event.item,
        );
        break;
    }
  }
  const leaseProblem = commitLeaseProblem(input);
  if (leaseProblem) throw new PaiError("INVALID_INPUT", leaseProblem);
  if (expectedVersion === 0 && !thread) {
    throw new PaiError(
      "INVALID_INPUT",
      `Creating thread "${threadId}" (expectedVersion 0) needs a thread-updated event carrying the new thread row.`,
    );
  }
  return {
    thread,
    messages: [...messages.values()],
    runs: [...runs.values()],
    actions: [...actions.values()],
    toolData: [...toolData.values()],
  };
}

/** The lease columns of a run row: set for the run the commit takes the lease of, else null (kept). */
export function leaseColumns(input: StorageCommit, runId: string): Record<string, string | null> {
  const lease = input.lease?.runId === runId ? input.lease : null;
  return { lease_owner: lease?.owner ?? null, lease_expires_at: lease?.expiresAt ?? null };
}
