// Row encoding between PAI's rows and SQL rows, and the opaque keyset cursors of list queries.
import type {
  ActionRow,
  JsonObject,
  JsonValue,
  MessageRow,
  RunRow,
  ScheduleRow,
  StoredThreadEvents,
  ThreadEvent,
  ThreadRow,
  ToolDataRow,
} from "@pai/core";
import type { JsonColumns } from "./families/sql-family.js";

/** A row as the driver returns it; every value is checked or converted on the way out. */
export type DbRow = Record<string, unknown>;

/**
 * Converts between PAI rows and table rows. How JSON columns are encoded and decoded is the SQL
 * family's choice (jsonb parsed by the driver on Postgres, text parsed here elsewhere).
 */
export class RowCodec {
  constructor(private readonly jsonColumns: JsonColumns) {}

  json(value: JsonValue | unknown): unknown {
    return this.jsonColumns.encode(value);
  }

  nullableJson(value: JsonValue | null | undefined): unknown {
    return value === null || value === undefined ? null : this.json(value);
  }

  parse<T>(value: unknown): T {
    return this.jsonColumns.decode(value) as T;
  }

  parseNullable<T>(value: unknown): T | null {
    return value === null || value === undefined ? null : this.parse<T>(value);
  }

  threadColumns(thread: ThreadRow): DbRow {
    return {
      scope_key: thread.scopeKey,
      user_key: thread.userKey,
      agent_id: thread.agentId,
      title: thread.title,
      status: thread.status,
      active_run_id: thread.activeRunId,
      metadata: this.nullableJson(thread.metadata),
      created_at: thread.createdAt,
      wake_at: thread.wakeAt ?? null,
      schedules: this.nullableJson(thread.schedules),
    };
  }

  /** A column cannot tell null from absent: `wakeAt` and `schedules` are read back only when set. */
  thread(row: DbRow): ThreadRow {
    const thread: ThreadRow = {
      threadId: row.thread_id as string,
      scopeKey: row.scope_key as string,
      userKey: (row.user_key as string | null) ?? null,
      agentId: row.agent_id as string,
      title: (row.title as string | null) ?? null,
      status: row.status as ThreadRow["status"],
      version: Number(row.version),
      activeRunId: (row.active_run_id as string | null) ?? null,
      metadata: this.parseNullable<JsonObject>(row.metadata),
      createdAt: row.created_at as string,
      updatedAt: row.updated_at as string,
    };
    if (row.wake_at !== null && row.wake_at !== undefined) thread.wakeAt = row.wake_at as string;
    const schedules = this.parseNullable<ScheduleRow[]>(row.schedules);
    if (schedules !== null) thread.schedules = schedules;
    return thread;
  }

  messageColumns(message: MessageRow, threadId: string): DbRow {
    return {
      thread_id: threadId,
      message_id: message.messageId,
      position: message.position,
      role: message.role,
      message: this.json(message.message),
      run_id: message.runId,
      created_at: message.createdAt,
      updated_at: message.updatedAt,
    };
  }

  message(row: DbRow): MessageRow {
    return {
      threadId: row.thread_id as string,
      messageId: row.message_id as string,
      position: Number(row.position),
      role: row.role as MessageRow["role"],
      message: this.parse<MessageRow["message"]>(row.message),
      runId: (row.run_id as string | null) ?? null,
      createdAt: row.created_at as string,
      updatedAt: row.updated_at as string,
    };
  }

  runColumns(run: RunRow, threadId: string, seq: number): DbRow {
    return {
      thread_id: threadId,
      run_id: run.runId,
      status: run.status,
      row: this.json(run),
      created_at: run.createdAt,
      seq,
    };
  }

  run(row: DbRow): RunRow {
    return this.parse<RunRow>(row.row);
  }

  actionColumns(action: ActionRow, threadId: string, seq: number): DbRow {
    return {
      thread_id: threadId,
      action_id: action.actionId,
      scope_key: action.scopeKey,
      state: action.state,
      created_at: action.createdAt,
      episode: action.episode,
      seq,
      row: this.json(action),
    };
  }

  action(row: DbRow): ActionRow {
    return this.parse<ActionRow>(row.row);
  }

  toolDataColumns(item: ToolDataRow, threadId: string, seq: number): DbRow {
    return {
      thread_id: threadId,
      tool_call_id: item.toolCallId,
      channel: item.channel,
      item_id: item.itemId,
      value: this.json(item.value),
      updated_at: item.updatedAt,
      seq,
    };
  }

  toolData(row: DbRow): ToolDataRow {
    return {
      threadId: row.thread_id as string,
      toolCallId: row.tool_call_id as string,
      channel: row.channel as string,
      itemId: row.item_id as string,
      value: this.parse<JsonValue>(row.value),
      updatedAt: row.updated_at as string,
    };
  }

  storedEvents(row: DbRow): StoredThreadEvents {
    return {
      threadId: row.thread_id as string,
      version: Number(row.version),
      events: this.parse<ThreadEvent[]>(row.events),
      createdAt: row.created_at as string,
    };
  }
}

/** Keyset cursors are opaque to callers: base64url JSON of the last row's sort key. */
export function encodeCursor(key: Array<string | number>): string {
  return Buffer.from(JSON.stringify(key), "utf8").toString("base64url");
}

/** A cursor key part this storage could have written: printable ASCII (ids, ISO stamps), bounded. */
const CURSOR_PART = /^[\x20-\x7e]{1,512}$/;

export function decodeCursor(cursor: string, length: number): Array<string | number> | null {
  try {
    const key: unknown = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8"));
    // Forged parts (objects, numbers, non-ASCII text) would reach SQL comparisons that some
    // engines reject with an error instead of an empty page; refuse them as invalid cursors.
    if (
      Array.isArray(key) &&
      key.length === length &&
      key.every((part) => typeof part === "string" && CURSOR_PART.test(part))
    ) {
      return key as string[];
    }
  } catch {
    // Falls through to null: the caller reports an invalid cursor.
  }
  return null;
}
