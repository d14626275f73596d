// Errors

export type {
  AnyCapability,
  Capability,
  CapabilityFacade,
  CapabilityFacades,
  CapabilityMap,
} from "./capabilities/capability.js";
export { defineCapability } from "./capabilities/capability.js";
export type { SchemaValidationResult, ToolSchema } from "./definitions/schema.js";
// Definitions: schemas and capabilities
export { formatIssues, toJsonSchema, validateSchema } from "./definitions/schema.js";
export type { PaiErrorCode, PaiErrorOptions, PaiIssue } from "./errors/pai-error.js";
export {
  getErrorMessage,
  PAI_ERROR_CODES,
  PAI_ERROR_HTTP_STATUS,
  PaiError,
  REDACTED_ERROR_MESSAGE,
  toPaiError,
} from "./errors/pai-error.js";
export type { ToolFailure, ToolFailureDetails } from "./errors/tool-failure.js";
export { toolFailureDetails } from "./errors/tool-failure.js";
export { ToolInvocationError } from "./errors/tool-invocation-error.js";
export type { JsonObject, JsonPrimitive, JsonValue } from "./json/json-value.js";
// JSON
export { isJsonValue, normalizeJson } from "./json/json-value.js";
export type {
  FileBody,
  FilesV1,
  SaveFileInput,
  ScopedFiles,
  StoredFileBody,
  UploadedFile,
} from "./ports/files.js";
export { createMemoryNotifier } from "./ports/memory-notifier.js";
export type { NotifierMessage, NotifierV1 } from "./ports/notifier.js";
export type {
  ListActionsInput,
  ListThreadsInput,
  RunLeaseInput,
  StorageCapabilities,
  StorageCommit,
  StorageCommitResult,
  StorageV1,
} from "./ports/storage.js";
// Ports
export { defaultStorageCapabilities } from "./ports/storage.js";
export type {
  CapabilityAcquireContext,
  CapabilityBinding,
} from "./runtime/capability-bindings.js";
export type { AgentLike, CreateAgentRuntimeOptions, CreatePaiOptions, Pai } from "./runtime/create-pai.js";
// Runtime (lead)
export { createAgentRuntime, createPai } from "./runtime/create-pai.js";
export type { RuntimeErrorReport, RuntimeOptions } from "./runtime/runtime-options.js";
export { createService } from "./service/create-service.js";
// Service API
export type { Identity, Register, Scope } from "./service/identity.js";
export type {
  ActionResult,
  ListResult,
  OutgoingMessage,
  PaiService,
  RunRequestOptions,
  SendResult,
  WatchEvent,
  WithIdentity,
} from "./service/service-types.js";
export type { LiveEvent, StoredThreadEvents, ThreadEvent } from "./state/events.js";
// Client state projection (transport/client helper)
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
// Persisted state
export type {
  ActionRow,
  ActionState,
  ClientToolSnapshot,
  MessageRow,
  RunRow,
  RunStatus,
  RunTrigger,
  StoredMessage,
  ThreadRow,
  ThreadStatus,
  ToolDataRow,
} from "./state/rows.js";
export type { ThreadSnapshot } from "./state/snapshot.js";
export { applyStoredEvents, applyThreadEvent } from "./state/snapshot.js";
export {
  analyzeRun,
  cancellationText,
  INTERRUPTED_TEXT,
} from "./state/transitions.js";

// Plugins (plugin system: definePlugin, runtime events)
export type { PluginConfig } from "./plugins/define-plugin.js";
export { definePlugin } from "./plugins/define-plugin.js";
export type {
  AnyPaiPlugin,
  NormalizePluginTools,
  PaiPlugin,
  PluginAfterToolResultArgs,
  PluginHook,
  PluginHookMatcher,
  PluginHooks,
  PluginToolDefinition,
  PluginToolInput,
  PluginToolRegistration,
  PluginToolsOf,
  RuntimeEventOf,
  WithPlugins,
} from "./plugins/plugin-types.js";
export type { AgentsWithPlugins } from "./runtime/create-pai.js";
export type {
  RuntimeEvent,
  RuntimeEventRun,
  RuntimeEventToolCall,
  RuntimeEventType,
  RuntimeObserver,
} from "./runtime/runtime-events.js";
