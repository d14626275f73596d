export type { PaiChatParseLimits } from "./chat-procedures.js";
export type {
  ClientActionResult,
  ClientCreatedThread,
  ClientSendResult,
  ClientViewEvent,
  ClientWatchEvent,
  PaiAnswerOutsideTheContract,
  PaiPendingActionData,
  PaiSettledView,
  PaiSubmitAnswer,
  PaiSubmitInput,
  PaiThreadView,
} from "./client-shapes.js";
export type {
  CreatePaiRouterOptions,
  PaiBaseProcedure,
  PaiChatStreams,
  PaiRouterFilesOptions,
  PaiRouterRecord,
} from "./create-pai-router.js";
export { createPaiRouter } from "./create-pai-router.js";
export type { PaiErrorData } from "./errors.js";
export { PAI_TO_TRPC_CODE, paiErrorData, toTrpcError } from "./errors.js";
export { guardTransformer } from "./guard-transformer.js";
export type { PaiRouterLimits } from "./schemas.js";
export { DEFAULT_PAI_ROUTER_LIMITS } from "./schemas.js";
