import type { JsonValue } from "../json/json-value.js";
import type {
  ActionDeadline,
  ActionRow,
  ActionState,
  MessageRow,
  RunRow,
  StoredMessage,
  ThreadRow,
  ToolDataRow,
} from "./rows.js";
import type { ThreadSnapshot } from "./snapshot.js";

/**
 * The client view of a thread, computed from stored rows by a pure function. It runs in
 * the browser (through `@pai/client`) and on the server alike, so a watcher that applies
 * committed events and re-projects sees exactly what a fresh load shows.
 */

/** One tool data item as clients see it, in write order inside its channel. */
export type ToolDataItemView<TValue = JsonValue> = {
  id: string;
  value: TValue;
  updatedAt: string;
};

/** Tool data of one call grouped by channel. Channels without items are absent. */
export type ToolDataView = { readonly [channel: string]: readonly ToolDataItemView[] | undefined };

/** How one suspension episode ended (or that it is still waiting). */
export type SuspensionStateView<TResume = JsonValue> =
  | { state: "pending" }
  | { state: "submitted"; resolvedAt: string; resume?: TResume }
  | { state: "cancelled"; resolvedAt: string }
  | { state: "failed"; resolvedAt: string };

/** One suspension episode of a tool call, contract-erased. */
export type SuspensionView<TInput = JsonValue | null, TResume = JsonValue> = {
  actionId: string;
  /** The suspend point name (not the fully qualified action name). */
  name: string;
  input: TInput;
  suspendedAt: string;
  /** When the wait ends unanswered and how (kept after it resolved), or null without a deadline. */
  deadline: ActionDeadline | null;
} & SuspensionStateView<TResume>;

export type PendingSuspensionView = Extract<SuspensionView, { state: "pending" }>;

/** Sidecars PAI adds to every native tool part. The native `state` is never changed. */
export type ToolPartSidecars = {
  /** Durable tool data of this call, grouped by channel (plus transient items while watching). */
  data: ToolDataView;
  /** Every suspension episode of this call, ordered by episode. */
  suspensions: readonly SuspensionView[];
  /** The episode that is still waiting, or null. */
  pendingSuspension: PendingSuspensionView | null;
  /**
   * True when the call was abandoned rather than answered: the part is `output-error` with a
   * "Cancelled" error text and either its latest action was cancelled or its run was cancelled.
   */
  cancelled: boolean;
};

type StoredPart = StoredMessage["parts"][number];
type NativeToolPart = Extract<StoredPart, { toolCallId: string }>;

/** A native tool part (`tool-<name>` or `dynamic-tool`) with PAI's sidecars. */
export type ProjectedToolPart = NativeToolPart & ToolPartSidecars;

/** A message part as clients see it: native parts unchanged, tool parts with sidecars. */
export type ProjectedPart = Exclude<StoredPart, NativeToolPart> | ProjectedToolPart;

/** A stored UI message with projected parts. */
export type ProjectedMessage = Omit<StoredMessage, "parts"> & { parts: ProjectedPart[] };

/** Where a pending action came from: the open message and native tool call that created it. */
export type PendingActionOriginData = {
  kind: "tool";
  threadId: string;
  toolName: string;
  suspendName?: string;
  messageId: string;
  toolCallId: string;
  runId: string;
};

/** Stable reference to a pending action: its origin plus the action id and qualified name. */
export type PendingActionRefData = PendingActionOriginData & {
  /** The suspension's action id, or the tool call id for client/external output. */
  actionId: string;
  name: string;
};

/** A pending action as plain data; `@pai/client` adds `submit`, `cancel` and `fail`. */
export type PendingActionData = {
  /** Fully qualified: `tool.suspendName` or `tool.output`. */
  name: string;
  input: JsonValue | null;
  origin: PendingActionOriginData;
  ref: PendingActionRefData;
  /** When the action resolves by itself if nobody answers, and how; null without a deadline. */
  deadline: ActionDeadline | null;
};

export type ThreadStateView = {
  thread: ThreadRow;
  version: number;
  messages: ProjectedMessage[];
  /** The active run (running or waiting), else the latest run, else null. */
  run: RunRow | null;
  /** Pending actions of the thread, in the order they were created. */
  pending: PendingActionData[];
};

export type ProjectThreadStateOptions = {
  /**
   * Transient tool data seen live (never stored). Merged after durable items of the same call
   * and channel; an item with the id of a durable one replaces it in place.
   */
  transientToolData?: readonly ToolDataRow[];
};

/** True for native AI SDK tool parts: `tool-<name>` and `dynamic-tool`. */
export function isNativeToolPart(part: { type: string }): part is NativeToolPart {
  return part.type === "dynamic-tool" || part.type.startsWith("tool-");
}

const CANCELLED_PREFIX = "Cancelled";

function toSuspensionView(action: ActionRow): SuspensionView {
  const base = {
    actionId: action.actionId,
    name: action.suspendName ?? action.name,
    input: action.input,
    suspendedAt: action.createdAt,
    deadline: action.deadline ?? null,
  };
  const resolvedAt = action.resolvedAt ?? action.createdAt;
  switch (action.state) {
    case "pending":
      return { ...base, state: "pending" };
    case "submitted":
      // Storage keeps an absent resume value as null, so null reads back as "no resume".
      return action.resume === null
        ? { ...base, state: "submitted", resolvedAt }
        : { ...base, state: "submitted", resolvedAt, resume: action.resume };
    case "cancelled":
      return { ...base, state: "cancelled", resolvedAt };
    case "failed":
      return { ...base, state: "failed", resolvedAt };
  }
}

function groupBy<T>(rows: readonly T[], key: (row: T) => string): Map<string, T[]> {
  const groups = new Map<string, T[]>();
  for (const row of rows) {
    const id = key(row);
    const group = groups.get(id);
    if (group) group.push(row);
    else groups.set(id, [row]);
  }
  return groups;
}

function groupToolData(rows: readonly ToolDataRow[], transient: readonly ToolDataRow[]): ToolDataView {
  const channels: Record<string, ToolDataItemView[]> = {};
  for (const row of [...rows, ...transient]) {
    const items = channels[row.channel] ?? [];
    channels[row.channel] = items;
    const item = { id: row.itemId, value: row.value, updatedAt: row.updatedAt };
    const index = items.findIndex((existing) => existing.id === row.itemId);
    if (index === -1) items.push(item);
    else items[index] = item;
  }
  return channels;
}

function latestActionState(actions: readonly ActionRow[] | undefined): ActionState | null {
  if (!actions || actions.length === 0) return null;
  return actions[actions.length - 1].state;
}

type CallContext = {
  actionsByCall: Map<string, ActionRow[]>;
  dataByCall: Map<string, ToolDataRow[]>;
  transientByCall: Map<string, ToolDataRow[]>;
  cancelledRuns: Set<string>;
};

function projectToolPart(part: NativeToolPart, row: MessageRow, context: CallContext): ProjectedToolPart {
  const actions = context.actionsByCall.get(part.toolCallId);
  const suspensions = (actions ?? []).filter((action) => action.kind === "suspend").map(toSuspensionView);
  const pendingSuspension =
    suspensions.find((suspension): suspension is PendingSuspensionView => suspension.state === "pending") ??
    null;
  const runIds = new Set<string>();
  if (row.runId) runIds.add(row.runId);
  for (const action of actions ?? []) runIds.add(action.runId);
  const abandoned =
    latestActionState(actions) === "cancelled" ||
    [...runIds].some((runId) => context.cancelledRuns.has(runId));
  const cancelled =
    part.state === "output-error" &&
    typeof part.errorText === "string" &&
    part.errorText.startsWith(CANCELLED_PREFIX) &&
    abandoned;
  return {
    ...part,
    data: groupToolData(
      context.dataByCall.get(part.toolCallId) ?? [],
      context.transientByCall.get(part.toolCallId) ?? [],
    ),
    suspensions,
    pendingSuspension,
    cancelled,
  };
}

function toPendingAction(action: ActionRow): PendingActionData {
  const origin: PendingActionOriginData = {
    kind: "tool",
    threadId: action.threadId,
    toolName: action.toolName,
    ...(action.suspendName === null ? {} : { suspendName: action.suspendName }),
    messageId: action.messageId,
    toolCallId: action.toolCallId,
    runId: action.runId,
  };
  return {
    name: action.name,
    input: action.input,
    origin,
    ref: { ...origin, actionId: action.actionId, name: action.name },
    deadline: action.deadline ?? null,
  };
}

function selectRun(snapshot: ThreadSnapshot): RunRow | null {
  const { activeRunId } = snapshot.thread;
  if (activeRunId) {
    const active = snapshot.runs.find((run) => run.runId === activeRunId);
    if (active) return active;
  }
  return snapshot.runs.length > 0 ? snapshot.runs[snapshot.runs.length - 1] : null;
}

/**
 * Projects stored rows into the client view of a thread (pure, browser-safe). Messages keep
 * their native parts; tool parts gain `data`, `suspensions`, `pendingSuspension` and
 * `cancelled`. `cancelled` is derived: the part is `output-error`, its error text starts with
 * "Cancelled", and either the call's latest action was cancelled or a run that owns the call
 * (the message's run or an action's run) ended `cancelled`.
 */
export function projectThreadState(
  snapshot: ThreadSnapshot,
  options: ProjectThreadStateOptions = {},
): ThreadStateView {
  const ordered = [...snapshot.actions].sort((a, b) => a.episode - b.episode);
  const context: CallContext = {
    actionsByCall: groupBy(ordered, (action) => action.toolCallId),
    dataByCall: groupBy(snapshot.toolData, (item) => item.toolCallId),
    transientByCall: groupBy(options.transientToolData ?? [], (item) => item.toolCallId),
    cancelledRuns: new Set(snapshot.runs.filter((run) => run.status === "cancelled").map((run) => run.runId)),
  };
  const messages = snapshot.messages.map((row): ProjectedMessage => {
    const parts = row.message.parts.map(
      (part): ProjectedPart => (isNativeToolPart(part) ? projectToolPart(part, row, context) : part),
    );
    return { ...row.message, parts };
  });
  return {
    thread: snapshot.thread,
    version: snapshot.thread.version,
    messages,
    run: selectRun(snapshot),
    pending: snapshot.actions.filter((action) => action.state === "pending").map(toPendingAction),
  };
}
