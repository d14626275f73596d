import { convertToModelMessages, type ModelMessage, type ToolSet, type UIMessage } from "ai";
import { sharedMessagePrefix } from "../state/snapshot.js";

/** A stored message row as the history reads it: only its UI message is converted. */
export type HistoryRow = { readonly message: unknown };

/**
 * Converts a thread's stored messages to model messages, remembering the result per stored
 * message object. Snapshots are immutable and a commit replaces only the rows it changes, so
 * a step re-converts just the open tail message instead of the whole history.
 *
 * The SDK converts each message on its own, except that it drops unanswered SDK approval
 * requests before the last user message; a history holding such parts is converted whole.
 */
export class ModelHistory {
  /** Keyed by the agent definition (its `toModelOutput` converters), then by stored message. */
  readonly #cache = new WeakMap<object, WeakMap<object, ModelMessage[] | "approval-request">>();
  /**
   * The last conversion of each thread this process is driving, least recently converted first.
   * Kept per thread, not per agent: with runs of several threads taking turns, a single
   * "previous conversion" never matched, and a step on a 1,000-message thread looked every
   * message up again. Bounded: a parked thread's conversion is kept for its resume like any
   * other, and gives way to newer ones like any other.
   */
  readonly #threads = new Map<string, ThreadHistory>();
  static readonly MAX_THREADS = 64;

  /** Threads whose last conversion is kept. */
  get size(): number {
    return this.#threads.size;
  }

  async convert(
    agent: object,
    threadId: string,
    rows: readonly HistoryRow[],
    tools: ToolSet,
  ): Promise<ModelMessage[]> {
    let cache = this.#cache.get(agent);
    if (!cache) {
      cache = new WeakMap();
      this.#cache.set(agent, cache);
    }
    // Taken out while converting (the conversion awaits): a concurrent step of the same thread
    // starts from an empty record instead of changing this one under it.
    const kept = this.#threads.get(threadId);
    this.#threads.delete(threadId);
    const last: ThreadHistory = kept && kept.agent === agent ? kept : { agent, rows: [], ends: [], out: [] };
    // The longest run of rows the thread's last conversion started with (the same objects)
    // keeps its output; the rest is dropped in place and converted again from the cache. A list
    // the snapshot made from the last one by upserts says how much of it is unchanged; any other
    // list is compared reference by reference (a row is immutable, so the same row holds the
    // same message, and the rows themselves are not visited).
    const shared =
      last.rows.length === 0 ? 0 : (sharedMessagePrefix(rows, last.rows) ?? commonStart(rows, last.rows));
    last.out.length = shared === 0 ? 0 : last.ends[shared - 1]!;
    last.ends.length = shared;
    for (let index = shared; index < rows.length; index++) {
      const row = rows[index]!;
      const message = row.message as UIMessage;
      let converted = cache.get(message);
      if (!converted) {
        // A message's parts are scanned once, when it is first converted, not on every step.
        converted = hasSdkApprovalRequest(message)
          ? "approval-request"
          : await convertToModelMessages([message], { tools });
        cache.set(message, converted);
      }
      if (converted === "approval-request") {
        return convertToModelMessages(
          rows.map((row) => row.message as UIMessage),
          { tools },
        );
      }
      for (const modelMessage of converted) last.out.push(modelMessage);
      last.ends.push(last.out.length);
    }
    // The caller's list is kept as it is, not copied: a snapshot's list never changes.
    last.rows = rows;
    this.#threads.set(threadId, last);
    if (this.#threads.size > ModelHistory.MAX_THREADS) {
      const oldest = this.#threads.keys().next().value;
      if (oldest !== undefined) this.#threads.delete(oldest);
    }
    // The caller gets its own array; the kept one must not change.
    return last.out.slice();
  }
}

/** A thread's last conversion: its stored rows, where each one's model messages end, and the output. */
type ThreadHistory = { agent: object; rows: readonly HistoryRow[]; ends: number[]; out: ModelMessage[] };

/** How many leading entries two lists share (the same references). */
function commonStart(rows: readonly HistoryRow[], earlier: readonly HistoryRow[]): number {
  const limit = Math.min(rows.length, earlier.length);
  let shared = 0;
  while (shared < limit && rows[shared] === earlier[shared]) shared++;
  return shared;
}

function hasSdkApprovalRequest(message: UIMessage): boolean {
  return message.parts.some((part) => (part as { state?: string }).state === "approval-requested");
}
