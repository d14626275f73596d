// Server side: a PAI thread as the AI SDK's UI message stream, behind a fetch-style handler.
export type { ChatPai, PaiChatHandlerOptions } from "./server/chat-handler.js";
export { createChatStreams, createPaiChatHandler, parseChatRequest } from "./server/chat-handler.js";
export { chatMessages } from "./server/chat-messages.js";
export { toNodeListener } from "./server/node-listener.js";
export type { PaiActionData, RunChunksOptions } from "./server/run-chunks.js";
export { RunChunks } from "./server/run-chunks.js";
export type { ChatChunk } from "./server/stream-run.js";
export { streamRun } from "./server/stream-run.js";
export type { PaiChatLimits } from "./wire.js";
export { DEFAULT_PAI_CHAT_LIMITS } from "./wire.js";
