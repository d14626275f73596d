// The AI SDK's `Chat` without a UI framework, shared by the transport tests.
import { AbstractChat, type ChatInit, type ChatState, type ChatStatus, type UIMessage } from "ai";

/** The SDK's `Chat` with plain arrays for state. */
export class NodeChat<M extends UIMessage> extends AbstractChat<M> {
  constructor(init: Omit<ChatInit<M>, "messages"> & { messages?: M[] }) {
    const state: ChatState<M> = {
      status: "ready" as ChatStatus,
      error: undefined,
      messages: init.messages ?? [],
      pushMessage: (message) => void state.messages.push(message),
      popMessage: () => void state.messages.pop(),
      replaceMessage: (index, message) => {
        state.messages[index] = message;
      },
      snapshot: (value) => structuredClone(value),
    };
    super({ ...init, state });
  }
}
