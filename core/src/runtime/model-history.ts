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
  readonly #byAgent = new WeakMap<object, WeakMap<object, ModelMessage[] | "approval-request">>();

  async convert(agent: object, messages: UIMessage[], tools: ToolSet): Promise<ModelMessage[]> {
    let cache = this.#byAgent.get(agent);
    if (!cache) {
      cache = new WeakMap();
      this.#byAgent.set(agent, cache);
    }
    const out: ModelMessage[] = [];
    for (const message of messages) {
      let converted = cache.get(message);
      if (!converted) {
        // A message's parts are scanned once, when it is first converted, not on every step.
        converted = hasSdkApprovalRequest(message)
          ? "approval-request"
          : await convertToModelMessages([message], { tools });
        cache.set(message, converted);
      }
      if (converted === "approval-request") return convertToModelMessages(messages, { tools });
      out.push(...converted);
    }
    return out;
  }
}

function hasSdkApprovalRequest(message: UIMessage): boolean {
  return message.parts.some((part) => (part as { state?: string }).state === "approval-requested");
}
