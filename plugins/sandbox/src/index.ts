export type { JustBashBackendOptions } from "./just-bash-backend.js";
export { justBashBackend } from "./just-bash-backend.js";
export type { SandboxBackend, SandboxLimits, SandboxSession } from "./sandbox-backend.js";
export type { SandboxOptions } from "./sandbox-binding.js";
export {
  DEFAULT_SANDBOX_IDLE_TIMEOUT_MS,
  DEFAULT_SANDBOX_LIMITS,
  sandboxBinding,
} from "./sandbox-binding.js";
export type {
  SandboxCommandInput,
  SandboxCommandResult,
  SandboxFacade,
} from "./sandbox-capability.js";
export { sandbox } from "./sandbox-capability.js";
export { sandboxPlugin } from "./sandbox-plugin.js";
