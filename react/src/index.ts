export type {
  AgentBinding,
  ClientToolConfigEntry,
  ClientToolDefinition,
  ClientToolsConfig,
} from "./agent-binding.js";
export type {
  AgentContractLike,
  ClientRoutedToolName,
  ContractOf,
  FrontendToolContract,
  MergedContract,
  RegisteredAgents,
  SchemaOutput,
  ThreadAgentOf,
  ToolContractLike,
} from "./contract-types.js";
export type { AgentBindingConfig, PaiProviderProps, PaiReact } from "./create-pai-react.js";
export { createPaiReact, Pai } from "./create-pai-react.js";
export { deriveToolState } from "./derive-tool-state.js";
export type { ClientToolErrorHandler, ClientToolErrorInfo } from "./pai-session.js";
export type {
  ClientToolExecute,
  ClientToolExecuteContext,
  ClientToolHandlers,
  ToolActionView,
  ToolDataChannel,
  ToolRender,
  ToolRenderData,
  ToolRenderProps,
  ToolRenderState,
  TypedPendingAction,
} from "./render-types.js";
export type { ThreadProviderProps } from "./thread-provider.js";
export { ThreadProvider } from "./thread-provider.js";
export type { AnyToolRenderProps, ToolPartProps } from "./tool-part.js";
export { ToolPart } from "./tool-part.js";
export type { ThreadHandle } from "./use-thread.js";
export { useThread } from "./use-thread.js";
