import { convertToModelMessages, type ModelMessage, type ToolSet, type UIMessage } from "ai";
import { ProviderPromptCache } from "./provider-prompt.js";

/** A stored message row as the history reads it: only its UI message is converted. */
export type HistoryRow = { readonly message: unknown };

/**
 * Converts a thread's stored messages to model messages, starting from the thread's last
 * conversion. Snapshots are immutable and a commit replaces only the rows it changes, so a step
 * converts just the rows that changed since (the open tail message) instead of the whole history.
 *
 * Nothing is kept per message object, or weakly: a global weak map from each stored message to
 * its conversion (and, before it, weak links between a thread's successive message lists) made
 * every minor collection trace and promote more, which cost a turn on a 1,000-message thread
 * more than the lookups saved (bench/README.md, eleventh pass). A thread that gave way to newer
 * ones is converted whole on its next step.
 *
 * The SDK converts each message on its own, except that it drops unanswered SDK approval
 * requests before the last user message; a history holding such parts is converted whole.
 */
export class ModelHistory {
  /**
   * The last conversion of each thread this process is driving, least recently converted first.
   * Kept per thread, not per agent: with runs of several threads taking turns, a single
   * "previous conversion" never matched, and a step on a 1,000-message thread converted every
   * message again. Bounded: a parked thread's conversion is kept for its resume like any
   * other, and gives way to newer ones like any other.
   */
  readonly #threads = new Map<string, ThreadHistory>();
  static readonly MAX_THREADS = 64;

  /** Threads whose last conversion is kept. */
  get size(): number {
    return this.#threads.size;
  }

  /**
   * The provider prompt kept with a thread's last conversion, for its next model call; none
   * while no conversion of the thread is kept (the call then converts the whole history).
   */
  providerPrompt(threadId: string): ProviderPromptCache | undefined {
    return this.#threads.get(threadId)?.prompt;
  }

  async convert(
    agent: object,
    threadId: string,
    rows: readonly HistoryRow[],
    tools: ToolSet,
  ): Promise<ModelMessage[]> {
    // Taken out while converting (the conversion awaits): a concurrent step of the same thread
    // starts from an empty record instead of changing this one under it.
    const kept = this.#threads.get(threadId);
    this.#threads.delete(threadId);
    // A conversion depends on the agent's tools (their `toModelOutput`): another agent's is not reused.
    const last: ThreadHistory =
      kept && kept.agent === agent
        ? kept
        : { agent, rows: [], ends: [], out: [], prompt: new ProviderPromptCache() };
    // The rows the last conversion started with (the same objects) keep their output: a row is
    // immutable, so the same row holds the same message, and the rows themselves are not read.
    const shared = commonStart(rows, last.rows);
    // The rest is taken off and converted again, except messages the last conversion also
    // had (a row replaced ahead of them, or a message inserted before them).
    const tail = reusableTail(last, shared);
    for (let index = shared; index < rows.length; index++) {
      const message = rows[index]!.message as UIMessage;
      // A message's parts are scanned when it is converted, not on every step.
      if (hasSdkApprovalRequest(message)) {
        return convertToModelMessages(
          rows.map((row) => row.message as UIMessage),
          { tools },
        );
      }
      const converted = tail?.get(message) ?? (await convertToModelMessages([message], { tools }));
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
type ThreadHistory = {
  agent: object;
  rows: readonly HistoryRow[];
  ends: number[];
  out: ModelMessage[];
  /** The provider prompt of the thread's last model call (a model step's, made from `out`). */
  prompt: ProviderPromptCache;
};

/** How many leading entries two lists share (the same references). */
function commonStart(rows: readonly HistoryRow[], earlier: readonly HistoryRow[]): number {
  const limit = Math.min(rows.length, earlier.length);
  let shared = 0;
  while (shared < limit && rows[shared] === earlier[shared]) shared++;
  return shared;
}

/**
 * Takes the rows of `last` after the first `shared` off it, and returns their messages'
 * conversions by message (none when nothing is left). Usually one or two rows: the open tail.
 */
function reusableTail(last: ThreadHistory, shared: number): Map<unknown, ModelMessage[]> | undefined {
  if (shared >= last.rows.length) {
    last.out.length = shared === 0 ? 0 : last.ends[shared - 1]!;
    last.ends.length = shared;
    return undefined;
  }
  const start = shared === 0 ? 0 : last.ends[shared - 1]!;
  const out = last.out.splice(start);
  const ends = last.ends.splice(shared);
  const byMessage = new Map<unknown, ModelMessage[]>();
  for (let index = 0; index < ends.length; index++) {
    const from = index === 0 ? 0 : ends[index - 1]! - start;
    byMessage.set(last.rows[shared + index]!.message, out.slice(from, ends[index]! - start));
  }
  return byMessage;
}

function hasSdkApprovalRequest(message: UIMessage): boolean {
  return message.parts.some((part) => (part as { state?: string }).state === "approval-requested");
}
