import { PaiError, type ThreadEvent } from "@pai/core";

/**
 * Where a client stands in one run's chunk stream. The chunks are derived, not logged (decisions
 * §16), so a position names what the client's copy of the run holds rather than an offset: a
 * stream resuming on any instance rebuilds `RunChunks` from the run's current committed state,
 * this, and what was committed after `version`.
 */
export type RunCursor = {
  /**
   * The last thread version whose chunks the client holds whole: of tool outputs, tool data and
   * actions it holds what that version held, unless they changed since. Unknown for a replay
   * cut before its first state was sent; then every one of them is sent again.
   */
  version?: number;
  /** Parts of the stored tail message the client holds whole. */
  parts: number;
  /** Characters the client holds of the committed text or reasoning part at index `parts`. */
  open?: number;
  /** The client got the message's `start` chunk. */
  started: boolean;
  /** A step is open: the next step sends `finish-step` first. */
  stepOpen: boolean;
  /** Live (uncommitted) steps the client holds, with the text blocks it holds of each. */
  live: Array<{
    step: number;
    blocks: Array<{ kind: "text" | "reasoning"; blockId: string; chars: number }>;
  }>;
  /** The client holds the run's last chunk. */
  done: boolean;
};

const MAX_NUMBER = 2 ** 31 - 1;
const MAX_LIVE_STEPS = 8;
const MAX_BLOCKS = 64;

/**
 * Dot-separated tagged tokens: `v12.p4.s3.t13` (version 12, four parts, live step 3 holding 13
 * characters of text block "0"); `b` no start yet, `c` no step open, `o40` a committed part open
 * at 40 characters, `r120~b%2E1` reasoning block "b.1"; `x` alone is done. Block ids are
 * percent-encoded with `.` and `~` escaped too, so separators never appear inside one.
 */
export function formatCursor(cursor: RunCursor): string {
  if (cursor.done) return "x";
  let out = cursor.version === undefined ? "" : `v${cursor.version}.`;
  out += `p${cursor.parts}`;
  if (!cursor.started) out += ".b";
  if (!cursor.stepOpen) out += ".c";
  if (cursor.open !== undefined) out += `.o${cursor.open}`;
  for (const step of cursor.live) {
    out += `.s${step.step}`;
    for (const block of step.blocks) {
      out += `.${block.kind === "text" ? "t" : "r"}${block.chars}`;
      if (block.blockId !== "0") out += `~${encodeBlockId(block.blockId)}`;
    }
  }
  return out;
}

export function parseCursor(text: string): RunCursor {
  const invalid = () => new PaiError("INVALID_INPUT", "lastEventId is not a position of this chat stream.");
  if (text === "x") return { parts: 0, started: true, stepOpen: false, live: [], done: true };
  const number = (digits: string | undefined) => {
    if (!digits || !/^\d{1,10}$/.test(digits) || Number(digits) > MAX_NUMBER) throw invalid();
    return Number(digits);
  };
  const cursor: RunCursor = { parts: -1, started: true, stepOpen: true, live: [], done: false };
  for (const token of text.split(".")) {
    const tag = token[0];
    const value = token.slice(1);
    if (tag === "v" && cursor.version === undefined && cursor.parts < 0) cursor.version = number(value);
    else if (tag === "p" && cursor.parts < 0) cursor.parts = number(value);
    else if (cursor.parts < 0) throw invalid();
    else if (token === "b") cursor.started = false;
    else if (token === "c") cursor.stepOpen = false;
    else if (tag === "o" && cursor.open === undefined && cursor.live.length === 0)
      cursor.open = number(value);
    else if (tag === "s" && cursor.live.length < MAX_LIVE_STEPS)
      cursor.live.push({ step: number(value), blocks: [] });
    else if ((tag === "t" || tag === "r") && cursor.live.length > 0) {
      const step = cursor.live.at(-1)!;
      if (step.blocks.length >= MAX_BLOCKS) throw invalid();
      const [chars, blockId] = value.split("~");
      step.blocks.push({
        kind: tag === "t" ? "text" : "reasoning",
        chars: number(chars),
        blockId: blockId === undefined ? "0" : decodeBlockId(blockId, invalid),
      });
    } else throw invalid();
  }
  if (cursor.parts < 0) throw invalid();
  return cursor;
}

function encodeBlockId(blockId: string): string {
  return encodeURIComponent(blockId).replace(
    /[.~!*'()]/g,
    (char) => `%${char.charCodeAt(0).toString(16).toUpperCase()}`,
  );
}

function decodeBlockId(encoded: string, invalid: () => Error): string {
  try {
    return decodeURIComponent(encoded);
  } catch {
    throw invalid();
  }
}

/** Keys of the rows a resumed stream compares: which of them were written after a position's version. */
export const rowKey = {
  message: (messageId: string) => `message\u0000${messageId}`,
  action: (actionId: string) => `action\u0000${actionId}`,
  data: (item: { toolCallId: string; channel: string; itemId: string }) =>
    `data\u0000${item.toolCallId}\u0000${item.channel}\u0000${item.itemId}`,
};

export function writtenRows(events: readonly ThreadEvent[]): Set<string> {
  const keys = new Set<string>();
  for (const event of events) {
    if (event.type === "message-upserted") keys.add(rowKey.message(event.message.messageId));
    else if (event.type === "action-upserted") keys.add(rowKey.action(event.action.actionId));
    else if (event.type === "tool-data-upserted") keys.add(rowKey.data(event.item));
  }
  return keys;
}
