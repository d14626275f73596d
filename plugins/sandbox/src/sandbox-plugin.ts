import { definePlugin } from "@pai/core";
import { type SandboxOptions, sandboxBinding } from "./sandbox-binding.js";
import { sandbox } from "./sandbox-capability.js";

/**
 * The sandbox plugin: binds the `sandbox` capability for every agent of the runtime.
 *
 * @example
 * createPai({ agents, storage, plugins: [sandboxPlugin({ limits: { timeoutMs: 10_000 } })] });
 */
export function sandboxPlugin(options: SandboxOptions = {}) {
  return definePlugin({
    id: "pai.sandbox",
    capabilities: { [sandbox.id]: sandboxBinding(options) },
  });
}
