// Turns a commit's events into the rows it writes and the upsert rules for them, the same for
// every SQL family.
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
import { type Expression, sql } from "kysely";
import type { DbRow, RowCodec } from "./row-codec.js";

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
function leaseColumns(input: StorageCommit, runId: string): Record<string, string | null> {
  const lease = input.lease?.runId === runId ? input.lease : null;
  return { lease_owner: lease?.owner ?? null, lease_expires_at: lease?.expiresAt ?? null };
}

/** A per-thread commit order for rows first written by it: version-major, event-minor. */
const SEQ_STRIDE = 1_000_000;

/**
 * How a table's rows are upserted: `update` columns take the new value, `keepFirst` keep the
 * value of the row's first write, `keepUnlessGiven` keep the stored value unless the new row
 * carries one.
 */
export type UpsertRule = {
  keys: string[];
  update: string[];
  keepFirst?: string[];
  keepUnlessGiven?: string[];
};

/** Each table's upsert rule: the same for every commit. */
export const upsertRules: Readonly<Record<TableWrite["table"], UpsertRule>> = {
  messages: {
    keys: ["thread_id", "message_id"],
    update: ["position", "role", "message", "run_id", "created_at", "updated_at"],
  },
  // A run keeps the lease it has (it may predate the run's first commit) unless the commit takes it.
  runs: {
    keys: ["thread_id", "run_id"],
    update: ["status", "row", "created_at"],
    keepFirst: ["seq"],
    keepUnlessGiven: ["lease_owner", "lease_expires_at"],
  },
  actions: {
    keys: ["thread_id", "action_id"],
    update: ["scope_key", "state", "created_at", "episode", "row"],
  },
  toolData: { keys: ["thread_id", "tool_call_id", "channel", "item_id"], update: ["value", "updated_at"] },
};

export type TableWrite = {
  table: "messages" | "runs" | "actions" | "toolData";
  rows: DbRow[];
  rule: UpsertRule;
};

/**
 * The upserts a commit makes, one per touched table, with rows encoded by `codec`. Every SQL
 * path writes these, so the rules live here once.
 */
export function tableWrites(input: StorageCommit, plan: CommitPlan, codec: RowCodec): TableWrite[] {
  const { threadId } = input;
  const seq = (index: number) => (input.expectedVersion + 1) * SEQ_STRIDE + index;
  const writes: TableWrite[] = [];
  if (plan.messages.length > 0) {
    writes.push({
      table: "messages",
      rows: plan.messages.map((message) => codec.messageColumns(message, threadId)),
      rule: upsertRules.messages,
    });
  }
  if (plan.runs.length > 0) {
    writes.push({
      table: "runs",
      rows: plan.runs.map((run, index) => ({
        ...codec.runColumns(run, threadId, seq(index)),
        ...leaseColumns(input, run.runId),
      })),
      rule: upsertRules.runs,
    });
  }
  if (plan.actions.length > 0) {
    writes.push({
      table: "actions",
      rows: plan.actions.map((action, index) => codec.actionColumns(action, threadId, seq(index))),
      rule: upsertRules.actions,
    });
  }
  if (plan.toolData.length > 0) {
    writes.push({
      table: "toolData",
      rows: plan.toolData.map((item, index) => codec.toolDataColumns(item, threadId, seq(index))),
      rule: upsertRules.toolData,
    });
  }
  return writes;
}

/** The `SET` assignments of an upsert's conflict branch, in the caller's SQL dialect. */
export function upsertAssignments(
  rule: UpsertRule,
  excluded: (column: string) => Expression<unknown>,
  current: (column: string) => Expression<unknown>,
): Array<[column: string, value: Expression<unknown>]> {
  return [
    ...rule.update.map((column): [string, Expression<unknown>] => [column, excluded(column)]),
    ...(rule.keepFirst ?? []).map((column): [string, Expression<unknown>] => [
      column,
      sql`coalesce(${current(column)}, ${excluded(column)})`,
    ]),
    ...(rule.keepUnlessGiven ?? []).map((column): [string, Expression<unknown>] => [
      column,
      sql`coalesce(${excluded(column)}, ${current(column)})`,
    ]),
  ];
}
