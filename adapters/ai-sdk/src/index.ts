// Browser-safe: the AI SDK chat transport and the UIMessage type of an agent.
export type { PaiChatTransportOptions } from "./client/pai-chat-transport.js";
export { PaiChatError, PaiChatTransport } from "./client/pai-chat-transport.js";
export type { PaiActionData, PaiUIDataTypes, PaiUIMessage, PaiUITools } from "./ui-message.js";
export type { ChatAnswer, ChatRequestBody } from "./wire.js";
