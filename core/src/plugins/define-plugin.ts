import { PaiError } from "../errors/pai-error.js";
import type { CapabilityBinding } from "../runtime/capability-bindings.js";
import type {
  NormalizePluginTools,
  PaiPlugin,
  PluginHooks,
  PluginToolInput,
  PluginToolRegistration,
} from "./plugin-types.js";

/** What `definePlugin` accepts. */
export type PluginConfig<TId extends string, TTools extends Record<string, PluginToolInput>> = {
  /** Stable, unique id, e.g. `"pai.sandbox"`. Inferred as a literal. */
  id: TId;
  /** Tools to add to agents: bare definitions or `{ tool, enabled?, mapContext?, onOutput? }`. */
  tools?: TTools;
  /** Registry ids of the agents that receive `tools`; all agents when absent. */
  agents?: readonly string[];
  /** Capability bindings keyed by capability id (`{ [sandbox.id]: binding }`). */
  capabilities?: Record<string, CapabilityBinding<any>>;
  hooks?: PluginHooks;
};

const HOOK_NAMES = [
  "afterToolResult",
  "onRunStart",
  "onRunEnd",
  "onStepStart",
  "onStepEnd",
  "onModelStart",
  "onModelEnd",
  "onToolStart",
  "onToolEnd",
  "onSuspend",
  "onActionResolved",
  "onEvent",
] as const satisfies ReadonlyArray<keyof PluginHooks>;

function isToolDefinition(value: unknown): value is { kind: "tool"; id: string } {
  return typeof value === "object" && value !== null && (value as { kind?: unknown }).kind === "tool";
}

/**
 * Defines a plugin: a declarative bundle of tools, capability bindings and hooks that
 * `createPai({ plugins })` merges into the runtime at construction. Misconfiguration throws
 * `PaiError` `INVALID_DEFINITION` here; conflicts between plugins throw at `createPai`.
 *
 * @example
 * const audit = definePlugin({
 *   id: "acme.audit",
 *   hooks: { onToolEnd: { matcher: { toolName: /^billing\./ }, handler: (event) => log(event) } },
 * });
 */
export function definePlugin<
  const TId extends string,
  const TTools extends Record<string, PluginToolInput> = {},
>(config: PluginConfig<TId, TTools>): PaiPlugin<TId, NormalizePluginTools<TTools>> {
  const id = config?.id;
  if (typeof id !== "string" || id.trim() === "" || id.trim() !== id) {
    throw new PaiError(
      "INVALID_DEFINITION",
      `definePlugin: id must be a non-empty string without surrounding whitespace (got ${JSON.stringify(id)}), e.g. "acme.audit".`,
    );
  }
  const where = `definePlugin("${id}")`;
  const tools: Record<string, PluginToolRegistration> = {};
  for (const [name, value] of Object.entries(config.tools ?? {})) {
    if (name.trim() === "") {
      throw new PaiError("INVALID_DEFINITION", `${where}: a tool registration name is empty.`);
    }
    const registration = isToolDefinition(value) ? { tool: value } : (value as PluginToolRegistration);
    if (!registration || !isToolDefinition(registration.tool)) {
      throw new PaiError(
        "INVALID_DEFINITION",
        `${where}: tools.${name} is not a tool definition. Pass a defineTool() result or { tool: definition }.`,
      );
    }
    tools[name] = Object.freeze({ ...registration });
  }
  const capabilities: Record<string, CapabilityBinding<any>> = {};
  for (const [capabilityId, binding] of Object.entries(config.capabilities ?? {})) {
    if (typeof binding?.acquire !== "function") {
      throw new PaiError(
        "INVALID_DEFINITION",
        `${where}: capabilities["${capabilityId}"] is not a binding. A binding needs an acquire(context) function.`,
      );
    }
    capabilities[capabilityId] = binding;
  }
  const hooks = config.hooks ?? {};
  for (const [name, hook] of Object.entries(hooks)) {
    if (!(HOOK_NAMES as readonly string[]).includes(name)) {
      throw new PaiError(
        "INVALID_DEFINITION",
        `${where}: unknown hook "${name}". Known hooks: ${HOOK_NAMES.join(", ")}.`,
      );
    }
    const handler = typeof hook === "function" ? hook : (hook as { handler?: unknown })?.handler;
    if (typeof handler !== "function") {
      throw new PaiError(
        "INVALID_DEFINITION",
        `${where}: hooks.${name} must be a function or { matcher?, handler }.`,
      );
    }
  }
  if (config.agents !== undefined && !Array.isArray(config.agents)) {
    throw new PaiError("INVALID_DEFINITION", `${where}: agents must be an array of agent registry ids.`);
  }
  return Object.freeze({
    kind: "plugin" as const,
    id,
    tools: Object.freeze(tools) as NormalizePluginTools<TTools>,
    ...(config.agents ? { agents: Object.freeze([...config.agents]) } : {}),
    capabilities: Object.freeze(capabilities),
    hooks: Object.freeze({ ...hooks }),
  });
}
