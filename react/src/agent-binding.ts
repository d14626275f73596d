import { type AgentContract, PaiError } from "@pai/core";
import { type ReactNode, useContext, useEffect, useLayoutEffect, useRef } from "react";
import { ThreadIdContext, usePaiSession } from "./contexts.js";
import type {
  AgentContractLike,
  ClientRoutedToolName,
  FrontendToolContract,
  ToolContractLike,
} from "./contract-types.js";
import type {
  BindingRegistry,
  ClientToolDefinitionInput,
  ClientToolRegistration,
  UntypedExecute,
  UntypedRender,
} from "./pai-session.js";
import type { ClientToolHandlers, ToolRender } from "./render-types.js";
import { type ThreadHandle, useThread } from "./use-thread.js";

/** The serializable part of a frontend-defined tool: name, description and schemas. */
export type ClientToolDefinition<TName extends string, TInputSchema, TOutputSchema> = {
  name: TName;
  /** Shown to the model. */
  description: string;
  /** A Zod 4 schema, any Standard Schema with JSON Schema support, or a JSON Schema object. */
  inputSchema: TInputSchema;
  /** Validates what the client submits as the tool output. */
  outputSchema?: TOutputSchema;
};

type ServerToolConfig<
  TContract extends ToolContractLike,
  TName extends string,
> = TContract["hasExecute"] extends true
  ? { execute?: never; render?: ToolRender<TContract, TName> }
  : ClientToolHandlers<TContract, TName>;

type FrontendToolConfig<TName extends string, TInputSchema, TOutputSchema> = Omit<
  ClientToolDefinition<TName, TInputSchema, TOutputSchema>,
  "name"
> &
  ClientToolHandlers<FrontendToolContract<TInputSchema, TOutputSchema>, TName>;

/**
 * One `clientTools` entry: handlers for a server-declared tool, or a frontend-defined tool
 * (description, schemas, handlers) when the name is not one of the agent's tools.
 */
export type ClientToolConfigEntry<
  TContract extends AgentContractLike,
  TName extends string,
  TInputSchema,
  TOutputSchema,
> = string extends keyof TContract
  ? Partial<Omit<ClientToolDefinition<TName, TInputSchema, TOutputSchema>, "name">> &
      ClientToolHandlers<FrontendToolContract<TInputSchema, TOutputSchema>, TName>
  : TName extends keyof TContract
    ? ServerToolConfig<TContract[TName], TName>
    : FrontendToolConfig<TName, TInputSchema, TOutputSchema>;

/** The `clientTools` map of `Pai.agent(name, { clientTools })`. */
export type ClientToolsConfig<
  TContract extends AgentContractLike,
  TInputs extends Record<string, unknown>,
  TOutputs,
> = {
  [TName in keyof TInputs & string]: ClientToolConfigEntry<
    TContract,
    TName,
    TInputs[TName],
    TName extends keyof TOutputs ? TOutputs[TName] : undefined
  >;
} & { [TName in keyof TOutputs]: { outputSchema?: TOutputs[TName] } };

/**
 * A typed binding to one agent, from `Pai.agent(name, config)`. `TContract` types tool hooks
 * (server tools plus the config's frontend-defined tools); `TAgent` types its threads' messages
 * and pending actions (`ThreadHandle<TAgent>`), open (`unknown` payloads) by default.
 */
export type AgentBinding<
  TAgentName extends string,
  TContract extends AgentContractLike,
  TAgent = AgentContract,
> = {
  readonly name: TAgentName;
  /**
   * Registers execute and/or render for a client tool while the calling component is mounted:
   * for its `ThreadProvider`'s thread, or every thread of the `Pai.Provider` when used above one.
   */
  useClientTool<TTool extends ClientRoutedToolName<TContract>>(
    toolName: TTool,
    handlers: ClientToolHandlers<TContract[TTool], TTool>,
  ): void;
  /**
   * Defines a frontend tool for as long as the component is mounted: its definition is sent
   * with requests from this provider session, and the handlers answer its calls.
   */
  useClientTool<const TTool extends string, TInputSchema, TOutputSchema = undefined>(
    definition: ClientToolDefinition<TTool, TInputSchema, TOutputSchema>,
    handlers?: ClientToolHandlers<FrontendToolContract<TInputSchema, TOutputSchema>, TTool>,
  ): void;
  /** Registers a local renderer for a tool's parts while the calling component is mounted. */
  useToolRenderer<TTool extends keyof TContract & string>(
    toolName: TTool,
    render: ToolRender<TContract[TTool], TTool>,
  ): void;
  /**
   * `useThread()` for this agent's threads, typed by the agent: `messages` carry typed tool
   * parts and `pending` is a union discriminated by action `name` whose `submit` takes that
   * suspend point's resume payload (or a client-routed tool's output).
   */
  useThread(threadId?: string): ThreadHandle<TAgent>;
};

type Handlers = { execute?: UntypedExecute; render?: UntypedRender };
type ConfigEntry = Handlers & { description?: unknown; inputSchema?: unknown; outputSchema?: unknown };

function assertDefinition(agent: string, definition: ClientToolDefinitionInput, where: string): void {
  if (typeof definition.name !== "string" || definition.name.length === 0) {
    throw new PaiError(
      "INVALID_DEFINITION",
      `${where}: a frontend-defined tool of agent "${agent}" needs a name.`,
    );
  }
  if (typeof definition.description !== "string") {
    throw new PaiError(
      "INVALID_DEFINITION",
      `${where}: frontend-defined tool "${definition.name}" needs a description string (the model reads it).`,
    );
  }
  if (typeof definition.inputSchema !== "object" || definition.inputSchema === null) {
    throw new PaiError(
      "INVALID_DEFINITION",
      `${where}: frontend-defined tool "${definition.name}" needs an inputSchema (a Zod schema or JSON Schema).`,
    );
  }
}

/** Turns a binding's `clientTools` config into provider-wide registrations (validated now, not at first use). */
export function configRegistrations(
  agent: string,
  clientTools: Record<string, ConfigEntry> | undefined,
): ClientToolRegistration[] {
  return Object.entries(clientTools ?? {}).map(([toolName, entry]) => {
    const frontend = entry.inputSchema !== undefined || entry.description !== undefined;
    const definition: ClientToolDefinitionInput | undefined = frontend
      ? {
          name: toolName,
          description: entry.description as string,
          inputSchema: entry.inputSchema,
          ...(entry.outputSchema === undefined ? {} : { outputSchema: entry.outputSchema }),
        }
      : undefined;
    if (definition) assertDefinition(agent, definition, `Pai.agent("${agent}").clientTools`);
    if (!definition && !entry.execute && !entry.render) {
      throw new PaiError(
        "INVALID_DEFINITION",
        `Pai.agent("${agent}").clientTools.${toolName} has neither execute nor render. Add one, or a description and inputSchema to define a frontend tool.`,
      );
    }
    return {
      agent,
      toolName,
      threadId: null,
      definition: () => definition,
      execute: () => entry.execute,
      render: () => entry.render,
    };
  });
}

/** The shared implementation of `useClientTool` and `useToolRenderer`. */
function useRegistration(
  agent: string,
  nameOrDefinition: string | ClientToolDefinitionInput,
  handlers: Handlers | undefined,
): void {
  const session = usePaiSession(`${agent}.useClientTool()`);
  const threadId = useContext(ThreadIdContext);
  const definition = typeof nameOrDefinition === "string" ? undefined : nameOrDefinition;
  const toolName = typeof nameOrDefinition === "string" ? nameOrDefinition : nameOrDefinition.name;
  if (definition) assertDefinition(agent, definition, `${agent}.useClientTool()`);
  const latest = useRef({ definition, handlers });
  // Handlers are read through this ref, so new closures on every render need no re-registration;
  // renderers are told to re-render when the render function changed.
  useLayoutEffect(() => {
    const previous = latest.current.handlers?.render;
    latest.current = { definition, handlers };
    if (handlers?.render && handlers.render !== previous) session.touch();
  });
  const hasExecute = handlers?.execute !== undefined;
  const hasRender = handlers?.render !== undefined;
  useEffect(() => {
    const execute: UntypedExecute = (input, context) => latest.current.handlers?.execute?.(input, context);
    const render = ((props: never): ReactNode =>
      (latest.current.handlers?.render as ((props: never) => ReactNode) | undefined)?.(props) ??
      null) as UntypedRender;
    return session.register({
      agent,
      toolName,
      threadId,
      definition: () => latest.current.definition,
      execute: () => (hasExecute ? execute : undefined),
      render: () => (hasRender ? render : undefined),
    });
  }, [session, agent, toolName, threadId, hasExecute, hasRender]);
}

/** Creates the binding object; its config registrations go into the factory's registry. */
export function createAgentBinding<
  TAgentName extends string,
  TContract extends AgentContractLike,
  TAgent = AgentContract,
>(
  name: TAgentName,
  clientTools: Record<string, ConfigEntry> | undefined,
  registry: BindingRegistry,
): AgentBinding<TAgentName, TContract, TAgent> {
  // A later binding of the same name replaces the earlier one (module reloads during development).
  registry.set(name, configRegistrations(name, clientTools));
  // Bindings hand out hooks by design (`Main.useClientTool(...)`); each one is a plain hook call.
  // biome-ignore lint/correctness/noComponentHookFactories: the binding object is the public hook API.
  const useClientTool = (nameOrDefinition: string | ClientToolDefinitionInput, handlers?: Handlers) =>
    useRegistration(name, nameOrDefinition, handlers);
  // biome-ignore lint/correctness/noComponentHookFactories: the binding object is the public hook API.
  const useToolRenderer = (toolName: string, render: UntypedRender) =>
    useRegistration(name, toolName, { render });
  return {
    name,
    useClientTool: useClientTool as AgentBinding<TAgentName, TContract, TAgent>["useClientTool"],
    useToolRenderer: useToolRenderer as unknown as AgentBinding<
      TAgentName,
      TContract,
      TAgent
    >["useToolRenderer"],
    useThread: (threadId?: string) => useThread<TAgent>(threadId),
  };
}
