import type { PaiClient } from "@pai/client";
import { type ReactNode, useEffect, useMemo } from "react";
import { type AgentBinding, type ClientToolsConfig, createAgentBinding } from "./agent-binding.js";
import { PaiSessionContext } from "./contexts.js";
import type {
  AgentContractLike,
  ContractOf,
  MergedContract,
  RegisteredAgents,
  ThreadAgentOf,
} from "./contract-types.js";
import { type BindingRegistry, type ClientToolErrorHandler, PaiSession } from "./pai-session.js";
import { ThreadProvider } from "./thread-provider.js";
import { ToolPart } from "./tool-part.js";
import { useThread } from "./use-thread.js";

export type PaiProviderProps = {
  client: PaiClient<never> | PaiClient;
  /**
   * Called when a client tool's automatic execution threw or its result was rejected. The
   * action stays pending either way. Defaults to `console.error`.
   */
  onClientToolError?: ClientToolErrorHandler;
  children?: ReactNode;
};

/** `Pai.agent` config. */
export type AgentBindingConfig<
  TContract extends AgentContractLike,
  TInputs extends Record<string, unknown>,
  TOutputs,
> = {
  /** Client tools of this agent: handlers for server-declared ones, or frontend-defined tools. */
  clientTools?: ClientToolsConfig<TContract, TInputs, TOutputs>;
};

/** The React bindings: provider, agent bindings and thread scoping. */
export type PaiReact<TAgents extends Record<string, unknown>> = {
  /** Holds this session's client tool registrations and connects components to `client`. */
  Provider(props: PaiProviderProps): ReactNode;
  /**
   * A typed binding to one agent. `clientTools` are provider-wide: execute/render for
   * server-declared client tools, and frontend-defined tools (description + schemas) whose
   * definition is sent with every request. Its `useThread()` is typed by the agent.
   */
  agent<
    const TName extends keyof TAgents & string,
    const TInputs extends Record<string, unknown> = {},
    const TOutputs extends { [K in keyof TInputs]?: unknown } = {},
  >(
    name: TName,
    config?: AgentBindingConfig<ContractOf<TAgents[TName]>, TInputs, TOutputs>,
  ): AgentBinding<
    TName,
    MergedContract<ContractOf<TAgents[TName]>, TInputs, TOutputs>,
    ThreadAgentOf<TAgents[TName]>
  >;
  ThreadProvider: typeof ThreadProvider;
  /** A thread of any agent; prefer a binding's `useThread()`, which is typed by its agent. */
  useThread: typeof useThread;
  ToolPart: typeof ToolPart;
};

/**
 * Creates React bindings typed by an agent map. The default `Pai` export uses the agents
 * declared on `Register`; call this to type them without a global declaration:
 *
 * @example
 * const Pai = createPaiReact<{ main: typeof agent }>();
 */
export function createPaiReact<
  TAgents extends Record<string, unknown> = RegisteredAgents,
>(): PaiReact<TAgents> {
  const registry: BindingRegistry = new Map();
  // Each factory owns its binding registry, so its Provider closes over it.
  // biome-ignore lint/correctness/noComponentHookFactories: created once per factory, not per render.
  function Provider({ client, onClientToolError, children }: PaiProviderProps): ReactNode {
    const session = useMemo(() => new PaiSession(client as PaiClient, registry), [client]);
    useEffect(() => {
      if (onClientToolError) session.onError = onClientToolError;
    }, [session, onClientToolError]);
    return <PaiSessionContext.Provider value={session}>{children}</PaiSessionContext.Provider>;
  }
  return {
    Provider,
    agent: ((name: string, config: { clientTools?: Record<string, never> } = {}) =>
      createAgentBinding(name, config.clientTools, registry)) as PaiReact<TAgents>["agent"],
    ThreadProvider,
    useThread,
    ToolPart,
  };
}

/** React bindings typed by the agents declared on `@pai/core`'s `Register` (`agents`). */
export const Pai: PaiReact<RegisteredAgents> = createPaiReact();
