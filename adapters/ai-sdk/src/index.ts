// Browser-safe: the AI SDK chat transport and the UIMessage type of an agent.
export type {
  ConnectionOptions,
  HeldMessages,
  PaiChatConnection,
  PaiChatTransportOptions,
} from "./client/pai-chat-transport.js";
export { PaiChatError, PaiChatTransport } from "./client/pai-chat-transport.js";
export type { TrpcChatProcedures } from "./client/trpc-connection.js";
export { trpcChatConnection } from "./client/trpc-connection.js";
export type {
  PaiActionData,
  PaiActionDataOf,
  PaiActionName,
  PaiActionResume,
  PaiUIDataTypes,
  PaiUIMessage,
  PaiUITools,
} from "./ui-message.js";
export type { ChatAnswer, ChatRequestBody } from "./wire.js";
