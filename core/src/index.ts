// Errors

export type {
  AnyCapability,
  Capability,
  CapabilityFacade,
  CapabilityFacades,
  CapabilityMap,
} from "./capabilities/capability.js";
export { defineCapability } from "./capabilities/capability.js";
// Definitions: tools, agents, manifest and projected tool parts (definition layer)
export type {
  AgentContract,
  AgentContractOf,
  InferAgentContract,
  ToolData,
  ToolInput,
  ToolName,
  ToolOutput,
  ToolSuspend,
} from "./definitions/agent-contract.js";
export type {
  AfterToolResultArgs,
  AfterToolResultHook,
  AgentDefinition,
  AgentLifecycle,
  AnyAgentDefinition,
  MapToolError,
  ParentToolCall,
  RuntimeHooks,
  ToolCallResult,
} from "./definitions/agent-types.js";
export type { DeadlineInput, SuspendOptions, ToolDeadline } from "./definitions/deadline.js";
export type { DefineAgentConfig, EffectiveRuntimeContext } from "./definitions/define-agent.js";
export { defineAgent } from "./definitions/define-agent.js";
export type { DefinedTool, DefineToolConfig, ToolIdCheck } from "./definitions/define-tool.js";
export { defineTool } from "./definitions/define-tool.js";
// Identity and scope: the host app's types (augment `Register`)
export type { Identity, Register, Scope } from "./definitions/identity.js";
export type {
  MessageId,
  PendingActionOrigin,
  PendingActionRef,
  RunId,
  ThreadId,
  ToolCallId,
} from "./definitions/pending-action.js";
export type { MapContextRequired, ToolRegistrationsInput } from "./definitions/registrations.js";
export type { RuntimeContextArgs, ToolOutputArgs, ToolResolverArgs } from "./definitions/resolver-args.js";
export type { SchemaValidationResult, ToolSchema } from "./definitions/schema.js";
// Definitions: schemas and capabilities
export { formatIssues, toJsonSchema, validateSchema } from "./definitions/schema.js";
export type {
  BuildToolContract,
  ContractOutput,
  InferSuspendContracts,
  InferToolDataContracts,
  JsonSchemaToolSchema,
  ParsedToolSchema,
  RawToolSchemaInput,
  SuspendMap,
  SuspendName,
  SuspendPoint,
  ToolContract,
  ToolDataSchemas,
  ZodToolSchema,
} from "./definitions/tool-contract.js";
// What `ctx.suspend` / `ctx.fail` return; the runtime alone builds and recognises them.
export type { ToolFailResult, ToolSuspendResult } from "./definitions/tool-results.js";
export type {
  AgentRunInput,
  AgentRunner,
  AgentRunOutput,
  AnyToolDefinition,
  BoundChildTool,
  ChildContextIntersection,
  InferToolContext,
  InferToolContract,
  NormalizedToolRegistration,
  RegisteredTool,
  ToolCallLocation,
  ToolCallMap,
  ToolConfig,
  ToolContextOf,
  ToolDataRecord,
  ToolDataWriter,
  ToolDefinition,
  ToolDefinitionConfig,
  ToolDescription,
  ToolDescriptionMap,
  ToolDescriptionMetadata,
  ToolEnabled,
  ToolEntry,
  ToolExecute,
  ToolExecuteResult,
  ToolExecutionContext,
  ToolInputOf,
  ToolMap,
  ToolModelOutput,
  ToolOutputOf,
  ToolRegistration,
  ToolRegistrationInput,
  ToolResumeEntry,
  ToolTriggerInput,
} from "./definitions/tool-types.js";
export type { PaiErrorCode, PaiErrorOptions, PaiIssue } from "./errors/pai-error.js";
export {
  correlationIdOf,
  getErrorMessage,
  internalErrorFor,
  PAI_ERROR_CODES,
  PAI_ERROR_HTTP_STATUS,
  PaiError,
  REDACTED_ERROR_MESSAGE,
  toPaiError,
} from "./errors/pai-error.js";
export type { ToolFailure, ToolFailureDetails } from "./errors/tool-failure.js";
export { toolFailureDetails } from "./errors/tool-failure.js";
export { ToolInvocationError } from "./errors/tool-invocation-error.js";
// JSON
export { copyRows } from "./json/copy-rows.js";
export type { JsonLimits, JsonObject, JsonPrimitive, JsonValue } from "./json/json-value.js";
export { assertPlainKeys, DEFAULT_JSON_LIMITS, isJsonValue, normalizeJson } from "./json/json-value.js";
export type { AgentManifest, ToolManifestEntry } from "./manifest/agent-manifest.js";
export { agentManifest, toolManifestEntry } from "./manifest/agent-manifest.js";
export type {
  AgentLike,
  AgentsWithPlugins,
  CreateAgentRuntimeOptions,
  CreatePaiOptions,
  Pai,
} from "./pai/create-pai.js";
// Runtime (lead)
export { createAgentRuntime, createPai, scopeFromIdentity } from "./pai/create-pai.js";
export { getToolName, isPaiToolPart } from "./parts/get-tool-name.js";
export type { AnyToolPart, NamedToolPart, ToolPartName } from "./parts/is-tool-part.js";
export { isToolPart } from "./parts/is-tool-part.js";
// Typed client views (@pai/client typed bindings)
export type {
  PaiDynamicToolPart,
  PaiNativeToolPart,
  PaiStaticToolPart,
  PaiSuspensionState,
  PaiSuspensionView,
  PaiToolDataItem,
  PaiToolDataView,
  PaiToolPart,
  PaiToolPartSidecars,
  PaiUIMessage,
  PaiUntypedSuspensionView,
} from "./parts/pai-tool-part.js";
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
export type {
  DispatchHandler,
  DispatchJob,
  DispatchSendOptions,
  DispatchV1,
  DispatchWorkerV1,
  DispatchWorkOptions,
} from "./ports/dispatch.js";
export { dispatchJobProblem } from "./ports/dispatch.js";
export type {
  FileBody,
  FilesV1,
  SaveFileInput,
  ScopedFiles,
  StoredFileBody,
  UploadedFile,
} from "./ports/files.js";
export { inProcessDispatch } from "./ports/in-process-dispatch.js";
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
export { commitLeaseProblem, defaultStorageCapabilities } from "./ports/storage.js";
export type {
  CapabilityAcquireContext,
  CapabilityBinding,
} from "./runtime/capability-bindings.js";
export type { PaiWorker, WorkerOptions } from "./runtime/run-worker.js";
export type {
  RuntimeEvent,
  RuntimeEventRun,
  RuntimeEventToolCall,
  RuntimeEventType,
  RuntimeObserver,
} from "./runtime/runtime-events.js";
export type {
  RuntimeErrorReport,
  RuntimeOptions,
  ScopeOption,
  ScopeResolver,
} from "./runtime/runtime-options.js";
// Service API
export type {
  ActionResult,
  ListResult,
  OutgoingMessage,
  PaiService,
  RunRequestOptions,
  SendResult,
  SettledRun,
  WaitOption,
  WatchEvent,
  WithIdentity,
} from "./service/service-types.js";
// The error text of a tool call a crash interrupted, as apps see it in the tool part.
export { ABANDONED_TEXT, INTERRUPTED_TEXT } from "./state/call-texts.js";
// Events as storage and `watch` carry them; `@pai/core/protocol` projects them for clients
export type { LiveEvent, StoredThreadEvents, ThreadEvent } from "./state/events.js";
// Persisted state
export type {
  ActionDeadline,
  ActionRow,
  ActionState,
  ClientToolSnapshot,
  MessageRow,
  RunRow,
  RunStatus,
  RunTrigger,
  ScheduleRow,
  ScheduleTiming,
  StoredMessage,
  ThreadRow,
  ThreadStatus,
  ToolDataRow,
} from "./state/rows.js";
export type { ThreadSnapshot } from "./state/snapshot.js";
