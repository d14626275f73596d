import { PaiError } from "../errors/pai-error.js";
import type { CapabilityBinding } from "../runtime/capability-bindings.js";
import type {
  AfterToolResultResult,
  RuntimeAgentDefinition,
  RuntimeToolRegistration,
} from "../runtime/definition-shapes.js";
import type { RuntimeEvent, RuntimeObserver } from "../runtime/runtime-events.js";
import type {
  AnyPaiPlugin,
  PluginAfterToolResultArgs,
  PluginHook,
  PluginHookMatcher,
  PluginHooks,
} from "./plugin-types.js";

type AgentEntry = { id: string; definition: RuntimeAgentDefinition };

/** The runtime pieces after plugins were merged in. */
export type AppliedPlugins = {
  agents: AgentEntry[];
  capabilities: Record<string, CapabilityBinding<any>>;
  observers: RuntimeObserver[];
};

const RUNTIME_OWNER = "createAgentRuntime({ capabilities })";

const EVENT_HOOKS: { [K in RuntimeEvent["type"]]: keyof PluginHooks } = {
  "run-start": "onRunStart",
  "run-end": "onRunEnd",
  "step-start": "onStepStart",
  "step-end": "onStepEnd",
  "model-start": "onModelStart",
  "model-end": "onModelEnd",
  "tool-start": "onToolStart",
  "tool-end": "onToolEnd",
  suspend: "onSuspend",
  "action-resolved": "onActionResolved",
};

function matches(matcher: PluginHookMatcher | undefined, agentId: string, toolName: string | undefined) {
  if (!matcher) return true;
  if (matcher.agentId !== undefined) {
    const ids = typeof matcher.agentId === "string" ? [matcher.agentId] : matcher.agentId;
    if (!ids.includes(agentId)) return false;
  }
  const pattern = matcher.toolName;
  if (pattern === undefined) return true;
  if (toolName === undefined) return false;
  if (typeof pattern === "string") return pattern === toolName;
  if (typeof pattern === "function") return pattern(toolName);
  if (pattern instanceof RegExp) return pattern.test(toolName);
  return (pattern as readonly string[]).includes(toolName);
}

/** Calls a hook if its matcher accepts the event; returns `undefined` when it did not run. */
function callHook<TArgs, TResult>(
  hook: PluginHook<TArgs, TResult> | undefined,
  args: TArgs,
  agentId: string,
  toolName: string | undefined,
): { result: TResult } | undefined {
  if (!hook) return undefined;
  if (typeof hook === "function") return { result: hook(args) };
  if (!matches(hook.matcher, agentId, toolName)) return undefined;
  return { result: hook.handler(args) };
}

/** One observer per plugin, dispatching each event to its specific hook, then to `onEvent`. */
function pluginObserver(plugin: AnyPaiPlugin): RuntimeObserver | undefined {
  const hooks = plugin.hooks;
  const hasObserverHooks = Object.keys(hooks).some((name) => name !== "afterToolResult");
  if (!hasObserverHooks) return undefined;
  return (event) => {
    const toolName = "toolName" in event ? event.toolName : undefined;
    const specific = hooks[EVENT_HOOKS[event.type]] as PluginHook<RuntimeEvent> | undefined;
    const pending: Array<unknown> = [];
    pending.push(callHook(specific, event, event.agentId, toolName)?.result);
    pending.push(callHook(hooks.onEvent, event, event.agentId, toolName)?.result);
    const promises = pending.filter(
      (value): value is Promise<void> => typeof (value as Promise<void> | undefined)?.then === "function",
    );
    if (promises.length > 0) return Promise.all(promises).then(() => undefined);
  };
}

/** Chains plugin `afterToolResult` hooks (in plugin order) before the agent's own. */
function composeAfterToolResult(
  agentId: string,
  plugins: AnyPaiPlugin[],
  own: NonNullable<RuntimeAgentDefinition["lifecycle"]>["afterToolResult"],
): NonNullable<RuntimeAgentDefinition["lifecycle"]>["afterToolResult"] {
  const hooks = plugins.map((plugin) => plugin.hooks.afterToolResult).filter((hook) => hook !== undefined);
  if (hooks.length === 0) return own;
  return async (args) => {
    let result: AfterToolResultResult = args.result;
    for (const hook of hooks) {
      const pluginArgs: PluginAfterToolResultArgs = { ...args, agentId, result };
      const called = callHook(hook, pluginArgs, agentId, args.toolName);
      const replaced = called ? await called.result : undefined;
      if (replaced) result = replaced;
    }
    if (!own) return result;
    return (await own({ ...args, result })) ?? result;
  };
}

/**
 * Merges plugins into a runtime's agents, capability bindings and observers. Pure: agent
 * definitions are copied, never changed. Conflicts throw `INVALID_DEFINITION` naming both owners.
 */
export function applyPlugins(input: {
  agents: AgentEntry[];
  capabilities?: Record<string, CapabilityBinding<any>>;
  observers?: RuntimeObserver[];
  plugins?: readonly AnyPaiPlugin[];
}): AppliedPlugins {
  const plugins = [...(input.plugins ?? [])];
  const capabilities: Record<string, CapabilityBinding<any>> = { ...(input.capabilities ?? {}) };
  const observers = [...(input.observers ?? [])];
  if (plugins.length === 0) return { agents: input.agents, capabilities, observers };

  const agentIds = new Set(input.agents.map((agent) => agent.id));
  const seen = new Set<string>();
  const capabilityOwners = new Map<string, string>(
    Object.keys(capabilities).map((id) => [id, RUNTIME_OWNER]),
  );
  plugins.forEach((plugin, index) => {
    if (plugin?.kind !== "plugin") {
      throw new PaiError(
        "INVALID_DEFINITION",
        `plugins[${index}] is not a plugin. Create it with definePlugin().`,
      );
    }
    if (seen.has(plugin.id)) {
      throw new PaiError(
        "INVALID_DEFINITION",
        `Plugin "${plugin.id}" is registered twice. Pass each plugin once to createPai({ plugins }).`,
      );
    }
    seen.add(plugin.id);
    for (const agentId of plugin.agents ?? []) {
      if (!agentIds.has(agentId)) {
        throw new PaiError(
          "INVALID_DEFINITION",
          `Plugin "${plugin.id}" lists agent "${agentId}", which is not registered. Registered agents: ${[...agentIds].join(", ")}.`,
        );
      }
    }
    for (const [capabilityId, binding] of Object.entries(plugin.capabilities)) {
      const owner = capabilityOwners.get(capabilityId);
      if (owner) {
        throw new PaiError(
          "INVALID_DEFINITION",
          `Capability "${capabilityId}" is bound by both ${owner} and plugin "${plugin.id}". Keep one binding: remove it from one of them.`,
        );
      }
      capabilityOwners.set(capabilityId, `plugin "${plugin.id}"`);
      capabilities[capabilityId] = binding;
    }
    const observer = pluginObserver(plugin);
    if (observer) observers.push(observer);
  });

  const agents = input.agents.map((entry): AgentEntry => {
    const applicable = plugins.filter((plugin) => !plugin.agents || plugin.agents.includes(entry.id));
    if (applicable.length === 0) return entry;
    const owners = new Map<string, string>(
      Object.keys(entry.definition.tools).map((name) => [name, `agent "${entry.id}"`]),
    );
    const tools: Record<string, RuntimeToolRegistration> = { ...entry.definition.tools };
    for (const plugin of applicable) {
      for (const [name, registration] of Object.entries(
        plugin.tools as Record<string, RuntimeToolRegistration>,
      )) {
        const owner = owners.get(name);
        if (owner) {
          throw new PaiError(
            "INVALID_DEFINITION",
            `Tool "${name}" of plugin "${plugin.id}" clashes with a tool of the same name from ${owner} (agent "${entry.id}"). Rename one of them, or limit the plugin with agents: [...].`,
          );
        }
        owners.set(name, `plugin "${plugin.id}"`);
        tools[name] = registration;
      }
    }
    const afterToolResult = composeAfterToolResult(
      entry.id,
      applicable,
      entry.definition.lifecycle?.afterToolResult,
    );
    const definition: RuntimeAgentDefinition = {
      ...entry.definition,
      tools: Object.freeze(tools),
      ...(afterToolResult ? { lifecycle: { ...entry.definition.lifecycle, afterToolResult } } : {}),
    };
    return { id: entry.id, definition: Object.freeze(definition) };
  });
  return { agents, capabilities, observers };
}
