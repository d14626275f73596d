import { convertToModelMessages, type ModelMessage, type ToolSet, type UIMessage } from "ai";

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
  readonly #byAgent = new WeakMap<object, AgentHistory>();

  async convert(agent: object, messages: UIMessage[], tools: ToolSet): Promise<ModelMessage[]> {
    let history = this.#byAgent.get(agent);
    if (!history) {
      history = { cache: new WeakMap(), messages: [], ends: [], out: [] };
      this.#byAgent.set(agent, history);
    }
    // The longest run of messages the agent's previous conversion started with (the same
    // objects) reuses that conversion's output, so a step on a long thread converts, and looks
    // up, only its tail. Runs of other threads in between fall back to the per-message cache.
    const previous = history;
    let shared = 0;
    while (
      shared < messages.length &&
      shared < previous.messages.length &&
      messages[shared] === previous.messages[shared]
    )
      shared++;
    const out: ModelMessage[] = shared === 0 ? [] : previous.out.slice(0, previous.ends[shared - 1]);
    const ends: number[] = previous.ends.slice(0, shared);
    for (let index = shared; index < messages.length; index++) {
      const message = messages[index]!;
      let converted = history.cache.get(message);
      if (!converted) {
        // A message's parts are scanned once, when it is first converted, not on every step.
        converted = hasSdkApprovalRequest(message)
          ? "approval-request"
          : await convertToModelMessages([message], { tools });
        history.cache.set(message, converted);
      }
      if (converted === "approval-request") return convertToModelMessages(messages, { tools });
      out.push(...converted);
      ends.push(out.length);
    }
    history.messages = messages.slice();
    history.ends = ends;
    history.out = out;
    // The caller gets its own array; the kept one must not change.
    return out.slice();
  }
}

type AgentHistory = {
  cache: WeakMap<object, ModelMessage[] | "approval-request">;
  /** The last conversion: its stored messages, where each one's model messages end, and the output. */
  messages: UIMessage[];
  ends: number[];
  out: ModelMessage[];
};

function hasSdkApprovalRequest(message: UIMessage): boolean {
  return message.parts.some((part) => (part as { state?: string }).state === "approval-requested");
}
