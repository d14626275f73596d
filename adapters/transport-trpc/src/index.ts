export type { PaiChatParseLimits } from "./chat-procedures.js";
export type {
  ClientActionResult,
  ClientViewEvent,
  ClientWatchEvent,
  CreatePaiRouterOptions,
  PaiAnswerOutsideTheContract,
  PaiBaseProcedure,
  PaiChatStreams,
  PaiPendingActionData,
  PaiRouterFilesOptions,
  PaiRouterRecord,
  PaiSubmitAnswer,
  PaiSubmitInput,
  PaiThreadView,
} from "./create-pai-router.js";
export { createPaiRouter } from "./create-pai-router.js";
export type { PaiErrorData } from "./errors.js";
export { PAI_TO_TRPC_CODE, paiErrorData, toTrpcError } from "./errors.js";
export { guardTransformer } from "./guard-transformer.js";
export type { PaiRouterLimits } from "./schemas.js";
export { DEFAULT_PAI_ROUTER_LIMITS } from "./schemas.js";
