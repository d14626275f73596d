import type { ActionRow, MessageRow, RunRow, ThreadRow, ToolDataRow } from "../state/rows.js";

/**
 * Small builders for persisted rows, shared by the storage conformance suite and other test
 * suites. Every builder fills the fields a test rarely cares about with fixed values (never a
 * clock or random id), so two calls with the same input build equal rows.
 */

/** The timestamp every builder uses unless the caller passes one. */
export const DEFAULT_ROW_TIME = "2026-01-01T00:00:00.000Z";

/**
 * Builds a `ThreadRow`. `version` is a placeholder: storage assigns the real one on commit.
 *
 * @example
 * const thread = makeThreadRow({ threadId: "t1", scopeKey: "org:acme" });
 */
export function makeThreadRow(input: Partial<ThreadRow> & { threadId: string }): ThreadRow {
  return {
    scopeKey: "scope-default",
    userKey: null,
    agentId: "agent-default",
    title: null,
    status: "idle",
    version: 0,
    activeRunId: null,
    metadata: null,
    createdAt: DEFAULT_ROW_TIME,
    updatedAt: DEFAULT_ROW_TIME,
    ...input,
  };
}

/**
 * Builds a `MessageRow` holding one text part. `text` is used only when `message` is absent.
 *
 * @example
 * const message = makeMessageRow({ threadId: "t1", messageId: "m1", position: 1, text: "hi" });
 */
export function makeMessageRow(
  input: Partial<MessageRow> & { threadId: string; messageId: string; position: number; text?: string },
): MessageRow {
  const { text, ...row } = input;
  const role = row.role ?? "user";
  return {
    role,
    message: { id: row.messageId, role, parts: [{ type: "text", text: text ?? `message ${row.messageId}` }] },
    runId: null,
    createdAt: DEFAULT_ROW_TIME,
    updatedAt: DEFAULT_ROW_TIME,
    ...row,
  };
}

/**
 * Builds a `RunRow`, `running` and started by a message unless overridden.
 *
 * @example
 * const run = makeRunRow({ threadId: "t1", runId: "r1", status: "queued" });
 */
export function makeRunRow(input: Partial<RunRow> & { threadId: string; runId: string }): RunRow {
  return {
    status: "running",
    trigger: { type: "message", messageId: "message-default" },
    step: 0,
    messageId: null,
    clientTools: [],
    clientData: null,
    error: null,
    createdAt: DEFAULT_ROW_TIME,
    updatedAt: DEFAULT_ROW_TIME,
    finishedAt: null,
    ...input,
  };
}

/**
 * Builds a pending suspend `ActionRow` named `tool.suspendName`.
 *
 * @example
 * const action = makeActionRow({ threadId: "t1", actionId: "a1", scopeKey: "org:acme" });
 */
export function makeActionRow(
  input: Partial<ActionRow> & { threadId: string; actionId: string; scopeKey: string },
): ActionRow {
  const toolName = input.toolName ?? "tool";
  const suspendName = input.suspendName === undefined ? "approval" : input.suspendName;
  return {
    runId: "run-default",
    messageId: "message-default",
    toolCallId: `call-${input.actionId}`,
    toolName,
    kind: "suspend",
    suspendName,
    name: `${toolName}.${suspendName ?? "output"}`,
    input: null,
    state: "pending",
    episode: 1,
    createdAt: DEFAULT_ROW_TIME,
    resolvedAt: null,
    resume: null,
    reason: null,
    idempotencyKey: null,
    ...input,
  };
}

/**
 * Builds a `ToolDataRow` on channel `data` unless overridden.
 *
 * @example
 * const item = makeToolDataRow({ threadId: "t1", toolCallId: "c1", itemId: "i1", value: { done: 1 } });
 */
export function makeToolDataRow(
  input: Partial<ToolDataRow> & { threadId: string; toolCallId: string; itemId: string },
): ToolDataRow {
  return {
    channel: "data",
    value: null,
    updatedAt: DEFAULT_ROW_TIME,
    ...input,
  };
}
