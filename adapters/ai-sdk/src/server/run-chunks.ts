import type { ActionRow, LiveEvent, ThreadSnapshot } from "@pai/core";
import type { UIMessageChunk } from "ai";

/**
 * Turns one PAI run into the AI SDK's UI message stream: its tail assistant message as
 * `start` / `start-step` / text, reasoning and tool chunks / `finish-step` / `finish`, its
 * tool data as `data-<channel>` parts, and its pending actions as the SDK's approval requests
 * (approval points) or `data-pai-action` parts (other suspend points). Pure: it is fed committed
 * states and live events in order and returns the chunks that bring a client up to date.
 */

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

type Emitted = { kind: "step" | "text" | "reasoning" | "tool" | "other"; state?: string };
type LiveBlock = {
  kind: "text" | "reasoning";
  blockId: string;
  chunkId: string;
  text: string;
  consumed: boolean;
};
type LiveStep = { started: boolean; startConsumed: boolean; blocks: LiveBlock[] };
type ToolPart = {
  type: string;
  toolCallId: string;
  toolName?: string;
  state: string;
  input?: unknown;
  output?: unknown;
  errorText?: string;
};

export type RunChunksOptions = {
  /** Whether a pending suspension is a yes/no approval (shown in the SDK's `approval-requested` state). */
  isApproval: (action: ActionRow) => boolean;
};

export class RunChunks {
  #started = false;
  #parts: Emitted[] = [];
  #steps = 0;
  #stepOpen = false;
  readonly #live = new Map<number, LiveStep>();
  readonly #actions = new Map<string, string>();
  readonly #data = new Map<string, string>();
  #done = false;

  constructor(
    readonly runId: string,
    readonly options: RunChunksOptions,
  ) {}

  /** The run reached an end of this response: it finished, failed, was cancelled or waits on an action. */
  get done(): boolean {
    return this.#done;
  }

  /**
   * The client already holds this state of the run (it is continuing its last assistant message
   * after answering a call): only what changes from here is sent.
   */
  assumeDelivered(snapshot: ThreadSnapshot): void {
    const tail = this.#tail(snapshot);
    for (const part of tail?.message.parts ?? []) {
      const kind = kindOf(part as { type: string });
      if (kind === "step") this.#steps++;
      this.#parts.push({ kind, ...(kind === "tool" ? { state: (part as ToolPart).state } : {}) });
    }
    for (const action of snapshot.actions)
      if (action.runId === this.runId) this.#actions.set(action.actionId, action.state);
    for (const item of snapshot.toolData) this.#data.set(dataKey(item), dataVersion(item));
  }

  /** Chunks for a committed state of the thread. */
  fromSnapshot(snapshot: ThreadSnapshot): UIMessageChunk[] {
    const out: UIMessageChunk[] = [];
    if (this.#done) return out;
    const run = snapshot.runs.find((candidate) => candidate.runId === this.runId);
    if (!run) return out;
    const tail = this.#tail(snapshot);
    if (tail) {
      this.#start(tail.messageId, out);
      tail.message.parts.forEach((part, index) => {
        const previous = this.#parts[index];
        if (!previous) this.#emitNew(part as ToolPart & { text?: string }, index, tail.messageId, out);
        else if (previous.kind === "tool") this.#emitToolChange(part as ToolPart, previous, out);
      });
      const calls = new Set(
        tail.message.parts.flatMap((part) =>
          (part as ToolPart).toolCallId ? [(part as ToolPart).toolCallId] : [],
        ),
      );
      for (const item of snapshot.toolData) {
        if (!calls.has(item.toolCallId) || this.#data.get(dataKey(item)) === dataVersion(item)) continue;
        this.#data.set(dataKey(item), dataVersion(item));
        out.push({ type: `data-${item.channel}`, id: `${item.toolCallId}:${item.itemId}`, data: item.value });
      }
    }
    for (const action of snapshot.actions) {
      if (action.runId !== this.runId || action.kind !== "suspend") continue;
      if (this.#actions.get(action.actionId) === action.state) continue;
      this.#actions.set(action.actionId, action.state);
      if (this.options.isApproval(action)) {
        if (action.state === "pending") {
          out.push({
            type: "tool-approval-request",
            approvalId: action.actionId,
            toolCallId: action.toolCallId,
          });
        }
        continue;
      }
      out.push({ type: "data-pai-action", id: action.actionId, data: actionData(action) });
    }
    if (run.status !== "running" && run.status !== "queued") {
      if (this.#stepOpen) out.push({ type: "finish-step" });
      this.#stepOpen = false;
      if (run.status === "failed") out.push({ type: "error", errorText: run.error ?? "The run failed." });
      else out.push({ type: "finish" });
      this.#done = true;
    }
    return out;
  }

  /** Chunks for a live (uncommitted) event: text and reasoning deltas, transient tool data. */
  fromLive(event: LiveEvent): UIMessageChunk[] {
    const out: UIMessageChunk[] = [];
    if (this.#done) return out;
    if (event.type === "tool-data-transient") {
      const item = event.item;
      out.push({
        type: `data-${item.channel}`,
        id: `${item.toolCallId}:${item.itemId}`,
        data: item.value,
        transient: true,
      });
      return out;
    }
    if ((event.type !== "text-delta" && event.type !== "reasoning-delta") || event.runId !== this.runId)
      return out;
    const step = event.step ?? this.#steps + 1;
    // A delta of a step whose commit was already sent is in that commit's text.
    if (step <= this.#steps) return out;
    this.#start(event.messageId, out);
    const live = this.#liveStep(step);
    if (!live.started) {
      if (this.#stepOpen) out.push({ type: "finish-step" });
      out.push({ type: "start-step" });
      live.started = true;
      this.#stepOpen = true;
    }
    const kind = event.type === "text-delta" ? "text" : "reasoning";
    const blockId = event.blockId ?? "0";
    let block = live.blocks.find((candidate) => candidate.kind === kind && candidate.blockId === blockId);
    if (!block) {
      block = {
        kind,
        blockId,
        chunkId: `${event.messageId}:${step}:${kind}:${blockId}`,
        text: "",
        consumed: false,
      };
      live.blocks.push(block);
      out.push({ type: `${kind}-start`, id: block.chunkId });
    }
    block.text += event.delta;
    out.push({ type: `${kind}-delta`, id: block.chunkId, delta: event.delta });
    return out;
  }

  #tail(snapshot: ThreadSnapshot) {
    const run = snapshot.runs.find((candidate) => candidate.runId === this.runId);
    return run?.messageId
      ? snapshot.messages.find((message) => message.messageId === run.messageId)
      : undefined;
  }

  #start(messageId: string, out: UIMessageChunk[]): void {
    if (this.#started) return;
    this.#started = true;
    out.push({ type: "start", messageId });
  }

  #liveStep(step: number): LiveStep {
    let live = this.#live.get(step);
    if (!live) {
      live = { started: false, startConsumed: false, blocks: [] };
      this.#live.set(step, live);
    }
    return live;
  }

  #emitNew(
    part: ToolPart & { text?: string },
    index: number,
    messageId: string,
    out: UIMessageChunk[],
  ): void {
    const kind = kindOf(part);
    if (kind === "step") {
      this.#steps++;
      const live = this.#live.get(this.#steps);
      if (live?.started && !live.startConsumed) live.startConsumed = true;
      else {
        if (this.#stepOpen) out.push({ type: "finish-step" });
        out.push({ type: "start-step" });
      }
      this.#stepOpen = true;
      this.#parts[index] = { kind };
      return;
    }
    if (kind === "text" || kind === "reasoning") {
      const text = part.text ?? "";
      const block = this.#live
        .get(this.#steps)
        ?.blocks.find((candidate) => candidate.kind === kind && !candidate.consumed);
      if (block) {
        block.consumed = true;
        // Live deltas can be missed (a reconnect, a notifier gap): the committed text completes them.
        if (text.length > block.text.length && text.startsWith(block.text)) {
          out.push({ type: `${kind}-delta`, id: block.chunkId, delta: text.slice(block.text.length) });
        }
        out.push({ type: `${kind}-end`, id: block.chunkId });
      } else {
        const id = `${messageId}:${index}`;
        out.push({ type: `${kind}-start`, id });
        if (text.length > 0) out.push({ type: `${kind}-delta`, id, delta: text });
        out.push({ type: `${kind}-end`, id });
      }
      this.#parts[index] = { kind };
      return;
    }
    if (kind === "tool") {
      const dynamic = part.type === "dynamic-tool";
      out.push({
        type: "tool-input-available",
        toolCallId: part.toolCallId,
        toolName: dynamic ? (part.toolName ?? "") : part.type.slice("tool-".length),
        input: part.input ?? {},
        ...(dynamic ? { dynamic: true } : {}),
      });
      const emitted: Emitted = { kind, state: "input-available" };
      this.#parts[index] = emitted;
      this.#emitToolChange(part, emitted, out);
      return;
    }
    if (part.type === "file") {
      const file = part as unknown as { url: string; mediaType: string };
      out.push({ type: "file", url: file.url, mediaType: file.mediaType });
    }
    this.#parts[index] = { kind };
  }

  #emitToolChange(part: ToolPart, emitted: Emitted, out: UIMessageChunk[]): void {
    if (part.state === emitted.state) return;
    emitted.state = part.state;
    const dynamic = part.type === "dynamic-tool" ? { dynamic: true } : {};
    if (part.state === "output-available") {
      out.push({
        type: "tool-output-available",
        toolCallId: part.toolCallId,
        output: part.output ?? null,
        ...dynamic,
      });
    } else if (part.state === "output-error") {
      out.push({
        type: "tool-output-error",
        toolCallId: part.toolCallId,
        errorText: part.errorText ?? "",
        ...dynamic,
      });
    }
  }
}

function kindOf(part: { type: string }): Emitted["kind"] {
  if (part.type === "step-start") return "step";
  if (part.type === "text") return "text";
  if (part.type === "reasoning") return "reasoning";
  if (part.type === "dynamic-tool" || part.type.startsWith("tool-")) return "tool";
  return "other";
}

/** Two writes in one millisecond share `updatedAt`: the value tells them apart. */
function dataVersion(item: { updatedAt: string; value: unknown }): string {
  return `${item.updatedAt}\u0000${JSON.stringify(item.value)}`;
}

function dataKey(item: { toolCallId: string; channel: string; itemId: string }): string {
  return `${item.toolCallId}\u0000${item.channel}\u0000${item.itemId}`;
}

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
