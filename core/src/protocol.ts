// The wire protocol between a PAI service and its clients: how stored rows and committed events
// become the client-safe rows and the projected thread view. Transports and client libraries
// (`@pai/client`, `@pai/react`, `@pai/transport-trpc`) build on it; apps rarely need it.

export { idProblem, MAX_ID_LENGTH, MAX_STORED_ID_LENGTH } from "./service/client-id.js";
export { fileUrlProblem } from "./service/file-url.js";
export { mediaTypeProblem } from "./service/media-type.js";
export { MAX_WAIT_MS } from "./service/settle-run.js";
export type {
  ClientActionRow,
  ClientRunRow,
  ClientThreadEvent,
  ClientThreadRow,
  ClientThreadSnapshot,
  ClientThreadView,
  ClientUploadedFile,
} from "./state/client-rows.js";
export {
  toClientAction,
  toClientEvent,
  toClientFile,
  toClientRun,
  toClientSnapshot,
  toClientThread,
  toClientView,
} from "./state/client-rows.js";
export type { LiveEvent, StoredThreadEvents, ThreadEvent } from "./state/events.js";
export type {
  PendingActionData,
  PendingActionOriginData,
  PendingActionRefData,
  PendingSuspensionView,
  ProjectedMessage,
  ProjectedPart,
  ProjectedToolPart,
  ProjectThreadStateOptions,
  SuspensionStateView,
  SuspensionView,
  ThreadStateView,
  ToolDataItemView,
  ToolDataView,
  ToolPartSidecars,
} from "./state/project-thread-state.js";
export { isNativeToolPart, projectThreadState } from "./state/project-thread-state.js";
export type { ThreadSnapshot } from "./state/snapshot.js";
export { applyStoredEvents, applyThreadEvent } from "./state/snapshot.js";
