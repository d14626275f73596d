export {
  type AnyToolPart,
  getToolName,
  isPaiToolPart,
  isToolPart,
  type NamedToolPart,
  type ToolPartName,
} from "@pai/core";
export type { PaiClient, PaiClientOptions } from "./create-pai-client.js";
export { createPaiClient } from "./create-pai-client.js";
export type {
  DownloadedFile,
  DownloadFileOptions,
  FilesClientOptions,
  PaiFilesClient,
  UploadFileInput,
} from "./files-client.js";
export { createFilesClient } from "./files-client.js";
export type {
  ContractOf,
  PendingActionOrigin,
  PendingActionRef,
  PendingActionView,
} from "./pending-action-view.js";
export type { ServiceTransportOptions } from "./service-transport.js";
export { serviceTransport } from "./service-transport.js";
export type {
  LiveMessageText,
  PaiThreadState,
  ThreadConnection,
  ThreadSendOptions,
  ThreadWatchOptions,
} from "./thread-client.js";
export { ThreadClient } from "./thread-client.js";
export type { FileDownload, PaiTransport } from "./transport.js";
export type {
  PaiThreadMessage,
  PaiThreadPart,
  PaiThreadSuspension,
  PaiThreadToolPart,
} from "./typed-message.js";
export type {
  IsOpenContract,
  PaiPendingAction,
  PendingActionForPart,
  PendingActionName,
  PendingActionNamed,
  ToolPendingAction,
  TypedPendingActionView,
} from "./typed-pending-action.js";
