import { type ActionRow, type LiveEvent, PaiError, type ThreadEvent, type ThreadSnapshot } from "@pai/core";
import type { UIMessageChunk } from "ai";
import { actionData } from "./action-data.js";
import { formatCursor, parseCursor, type RunCursor, rowKey, writtenRows } from "./run-cursor.js";

export { actionData, type PaiActionData } from "./action-data.js";

/**
 * Turns one PAI run into the AI SDK's UI message stream: its tail assistant message as
 * `start` / `start-step` / text, reasoning and tool chunks / `finish-step` / `finish`, its
 * tool data as `data-<channel>` parts, and its pending actions as the SDK's approval requests
 * (approval points) or `data-pai-action` parts (other suspend points). Pure: it is fed committed
 * states and live events in order and returns the chunks that bring a client up to date, and
 * the stream position after each of them (`positions`) from which `resumeAt` continues.
 */

type Emitted = { kind: "step" | "text" | "reasoning" | "tool" | "other"; state?: string };
type LiveBlock = {
  kind: "text" | "reasoning";
  blockId: string;
  /** Null when restored from a position before the message id is known. */
  chunkId: string | null;
  /** What the client holds; only its length is known of a block restored from a position. */
  text: string | null;
  chars: number;
  consumed: boolean;
};
type LiveStep = {
  started: boolean;
  startConsumed: boolean;
  blocks: LiveBlock[];
  /** Its deltas are not streamed: some may have been missed, so its commit completes it. */
  muted: boolean;
};
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
  /** The last thread version whose chunks were all returned. */
  #version: number | undefined;
  /** Characters sent of the committed text part at `#parts.length` (its start was sent). */
  #open: number | undefined;
  /** After a reconnect: live deltas stream only for a step whose start was announced since. */
  #resumed = false;
  #announced = 0;
  #positions: string[] = [];

  constructor(
    readonly runId: string,
    readonly options: RunChunksOptions,
  ) {}

  /** The run reached an end of this response: it finished, failed, was cancelled or waits on an action. */
  get done(): boolean {
    return this.#done;
  }

  /** Where a client that holds everything returned so far stands. */
  get position(): string {
    return formatCursor(this.#cursor());
  }

  /** The position after each chunk the last `fromSnapshot` / `fromLive` returned, in order. */
  get positions(): readonly string[] {
    return this.#positions;
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
    for (const item of snapshot.toolData) this.#data.set(rowKey.data(item), dataVersion(item));
    this.#version = snapshot.thread.version;
  }

  /**
   * The client holds the stream up to `position` (its link reconnected), `snapshot` is the
   * thread's current state and `since` what was committed after the position's version: only what
   * follows is sent. Text is never repeated: deltas the client got of a step not committed yet
   * end with that step's commit, which completes them. Cut inside one state's chunks, the client
   * may get a tool output, data part or action of that state again, which the SDK applies in place.
   */
  resumeAt(snapshot: ThreadSnapshot, position: string, since: readonly ThreadEvent[] = []): void {
    const cursor = parseCursor(position);
    this.#resumed = true;
    if (cursor.done) {
      this.#done = true;
      return;
    }
    const tail = this.#tail(snapshot);
    const parts = (tail?.message.parts ?? []) as Array<ToolPart & { text?: string }>;
    const open = cursor.open === undefined ? undefined : parts[cursor.parts];
    if (
      cursor.parts > parts.length ||
      (cursor.version ?? 0) > snapshot.thread.version ||
      (cursor.open !== undefined && open?.type !== "text" && open?.type !== "reasoning")
    ) {
      throw new PaiError("INVALID_INPUT", "lastEventId is ahead of the run's committed state.");
    }
    // The client holds the position's version of every row not written since; without a
    // version it may lack any, so all are sent again.
    const known = cursor.version !== undefined;
    const changed = writtenRows(since);
    const heldTail = known && tail !== undefined && !changed.has(rowKey.message(tail.messageId));
    for (const part of parts.slice(0, cursor.parts)) {
      const kind = kindOf(part);
      if (kind === "step") this.#steps++;
      this.#parts.push({ kind, ...(kind === "tool" && heldTail ? { state: part.state } : {}) });
    }
    if (known) {
      for (const action of snapshot.actions) {
        if (action.runId === this.runId && !changed.has(rowKey.action(action.actionId)))
          this.#actions.set(action.actionId, action.state);
      }
      for (const item of snapshot.toolData)
        if (!changed.has(rowKey.data(item))) this.#data.set(rowKey.data(item), dataVersion(item));
    }
    this.#version = cursor.version;
    this.#started = cursor.started;
    this.#stepOpen = cursor.stepOpen;
    this.#open = cursor.open;
    for (const step of cursor.live) {
      this.#live.set(step.step, {
        started: true,
        startConsumed: step.step <= this.#steps,
        muted: true,
        blocks: step.blocks.map((block) => ({ ...block, chunkId: null, text: null, consumed: false })),
      });
    }
  }

  /** Chunks for a committed state of the thread. */
  fromSnapshot(snapshot: ThreadSnapshot): UIMessageChunk[] {
    const out = this.#begin();
    if (this.#done) return out;
    const run = snapshot.runs.find((candidate) => candidate.runId === this.runId);
    if (!run) return this.#settled(snapshot, out);
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
        if (!calls.has(item.toolCallId) || this.#data.get(rowKey.data(item)) === dataVersion(item)) continue;
        this.#data.set(rowKey.data(item), dataVersion(item));
        this.#emit(out, {
          type: `data-${item.channel}`,
          id: `${item.toolCallId}:${item.itemId}`,
          data: item.value,
        });
      }
    }
    for (const action of snapshot.actions) {
      if (action.runId !== this.runId || action.kind !== "suspend") continue;
      if (this.#actions.get(action.actionId) === action.state) continue;
      this.#actions.set(action.actionId, action.state);
      if (this.options.isApproval(action)) {
        if (action.state === "pending") {
          this.#emit(out, {
            type: "tool-approval-request",
            approvalId: action.actionId,
            toolCallId: action.toolCallId,
          });
        }
        continue;
      }
      this.#emit(out, { type: "data-pai-action", id: action.actionId, data: actionData(action) });
    }
    if (run.status !== "running" && run.status !== "queued") {
      this.#finishStep(out);
      this.#done = true;
      if (run.status === "failed")
        this.#emit(out, { type: "error", errorText: run.error ?? "The run failed." });
      else this.#emit(out, { type: "finish" });
    }
    return this.#settled(snapshot, out);
  }

  /** The batch for a state is whole once its last chunk arrives: that chunk's position holds the state. */
  #settled(snapshot: ThreadSnapshot, out: UIMessageChunk[]): UIMessageChunk[] {
    this.#version = snapshot.thread.version;
    if (out.length > 0) this.#positions[out.length - 1] = this.position;
    return out;
  }

  /** Chunks for a live (uncommitted) event: text and reasoning deltas, transient tool data. */
  fromLive(event: LiveEvent): UIMessageChunk[] {
    const out = this.#begin();
    if (this.#done) return out;
    if (event.type === "tool-data-transient") {
      const item = event.item;
      this.#emit(out, {
        type: `data-${item.channel}`,
        id: `${item.toolCallId}:${item.itemId}`,
        data: item.value,
        transient: true,
      });
      return out;
    }
    if (event.type === "step-started" && event.runId === this.runId) this.#announced = event.step;
    if ((event.type !== "text-delta" && event.type !== "reasoning-delta") || event.runId !== this.runId)
      return out;
    const step = event.step ?? this.#steps + 1;
    // A delta of a step whose commit was already sent is in that commit's text.
    if (step <= this.#steps) return out;
    const live = this.#liveStep(step);
    // Joined mid-step after a reconnect: the deltas before this one are lost, so none is sent.
    if (!live.started && this.#resumed && this.#announced !== step) live.muted = true;
    if (live.muted) return out;
    this.#start(event.messageId, out);
    if (!live.started) {
      this.#finishStep(out);
      live.started = true;
      this.#stepOpen = true;
      this.#emit(out, { type: "start-step" });
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
        chars: 0,
        consumed: false,
      };
      live.blocks.push(block);
      this.#emit(out, { type: `${kind}-start`, id: block.chunkId! });
    }
    if (block.text !== null) block.text += event.delta;
    block.chars += event.delta.length;
    this.#emit(out, { type: `${kind}-delta`, id: block.chunkId!, delta: event.delta });
    return out;
  }

  #begin(): UIMessageChunk[] {
    this.#positions = [];
    return [];
  }

  /** Every state change a chunk brings is made before the chunk is emitted, so its position holds it. */
  #emit(out: UIMessageChunk[], chunk: UIMessageChunk): void {
    out.push(chunk);
    this.#positions.push(this.position);
  }

  #finishStep(out: UIMessageChunk[]): void {
    if (!this.#stepOpen) return;
    this.#stepOpen = false;
    this.#emit(out, { type: "finish-step" });
  }

  #cursor(): RunCursor {
    if (this.#done) return { parts: 0, started: true, stepOpen: false, live: [], done: true };
    const live: RunCursor["live"] = [];
    for (const [step, state] of this.#live) {
      if (!state.started || step < this.#steps) continue;
      const blocks = state.blocks
        .filter((block) => !block.consumed)
        .map(({ kind, blockId, chars }) => ({ kind, blockId, chars }));
      if (step > this.#steps || blocks.length > 0) live.push({ step, blocks });
    }
    return {
      ...(this.#version !== undefined ? { version: this.#version } : {}),
      parts: this.#parts.length,
      ...(this.#open !== undefined ? { open: this.#open } : {}),
      started: this.#started,
      stepOpen: this.#stepOpen,
      live,
      done: false,
    };
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
    this.#emit(out, { type: "start", messageId });
  }

  #liveStep(step: number): LiveStep {
    let live = this.#live.get(step);
    if (!live) {
      live = { started: false, startConsumed: false, blocks: [], muted: false };
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
      const step = this.#steps + 1;
      const live = this.#live.get(step);
      const consumed = live?.started === true && !live.startConsumed;
      if (consumed) live.startConsumed = true;
      else this.#finishStep(out);
      this.#steps = step;
      this.#stepOpen = true;
      for (const key of this.#live.keys()) if (key < step) this.#live.delete(key);
      this.#parts[index] = { kind };
      if (!consumed) this.#emit(out, { type: "start-step" });
      return;
    }
    if (kind === "text" || kind === "reasoning") {
      const text = part.text ?? "";
      const block = this.#live
        .get(this.#steps)
        ?.blocks.find((candidate) => candidate.kind === kind && !candidate.consumed);
      if (block) {
        block.chunkId ??= `${messageId}:${this.#steps}:${kind}:${block.blockId}`;
        // Live deltas can be missed (a reconnect, a notifier gap): the committed text completes them.
        const missed = text.length > block.chars && (block.text === null || text.startsWith(block.text));
        if (missed) {
          const delta = text.slice(block.chars);
          block.text = block.text === null ? null : text;
          block.chars = text.length;
          this.#emit(out, { type: `${kind}-delta`, id: block.chunkId, delta });
        }
        block.consumed = true;
        this.#parts[index] = { kind };
        this.#emit(out, { type: `${kind}-end`, id: block.chunkId });
      } else {
        const id = `${messageId}:${index}`;
        if (this.#open === undefined) {
          this.#open = 0;
          this.#emit(out, { type: `${kind}-start`, id });
        }
        if (text.length > this.#open) {
          const delta = text.slice(this.#open);
          this.#open = text.length;
          this.#emit(out, { type: `${kind}-delta`, id, delta });
        }
        this.#open = undefined;
        this.#parts[index] = { kind };
        this.#emit(out, { type: `${kind}-end`, id });
      }
      return;
    }
    if (kind === "tool") {
      const dynamic = part.type === "dynamic-tool";
      const emitted: Emitted = { kind, state: "input-available" };
      this.#parts[index] = emitted;
      this.#emit(out, {
        type: "tool-input-available",
        toolCallId: part.toolCallId,
        toolName: dynamic ? (part.toolName ?? "") : part.type.slice("tool-".length),
        input: part.input ?? {},
        ...(dynamic ? { dynamic: true } : {}),
      });
      this.#emitToolChange(part, emitted, out);
      return;
    }
    this.#parts[index] = { kind };
    if (part.type === "file") {
      const file = part as unknown as { url: string; mediaType: string };
      this.#emit(out, { type: "file", url: file.url, mediaType: file.mediaType });
    }
  }

  #emitToolChange(part: ToolPart, emitted: Emitted, out: UIMessageChunk[]): void {
    if (part.state === emitted.state) return;
    emitted.state = part.state;
    const dynamic = part.type === "dynamic-tool" ? { dynamic: true } : {};
    if (part.state === "output-available") {
      this.#emit(out, {
        type: "tool-output-available",
        toolCallId: part.toolCallId,
        output: part.output ?? null,
        ...dynamic,
      });
    } else if (part.state === "output-error") {
      this.#emit(out, {
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
