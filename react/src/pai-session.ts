import { asSchema } from "@ai-sdk/provider-utils";
import type { PaiClient, PendingActionView, ThreadClient } from "@pai/client";
import { type ClientToolSnapshot, getErrorMessage, type JsonObject, PaiError } from "@pai/core";
import type { ReactNode } from "react";

/** A frontend-defined tool as declared in config or the object form of `useClientTool`. */
export type ClientToolDefinitionInput = {
  name: string;
  description: string;
  inputSchema: unknown;
  outputSchema?: unknown;
};

/** Contract-erased execute, as the session calls it. */
export type UntypedExecute = (
  input: unknown,
  context: { threadId: string; toolCallId: string; action: PendingActionView },
) => unknown;

/** Contract-erased renderer, as the session calls it. */
export type UntypedRender = (props: never) => ReactNode;

/**
 * One client tool registration: from an agent binding's config or a mounted hook. Handlers
 * are read through getters so a hook can swap closures on every render without re-registering.
 */
export type ClientToolRegistration = {
  /** The agent (binding name) whose threads it applies to. */
  agent: string;
  toolName: string;
  /** The thread it is scoped to, or null for every thread of the provider. */
  threadId: string | null;
  /** The serializable definition of a frontend-defined tool; undefined for server-declared ones. */
  definition(): ClientToolDefinitionInput | undefined;
  execute(): UntypedExecute | undefined;
  render(): UntypedRender | undefined;
};

/** What went wrong while a client answered a tool on its own. */
export type ClientToolErrorInfo = {
  threadId: string;
  toolName: string;
  actionId: string;
  /** `execute` threw, or submitting its result was rejected (for example invalid output). */
  phase: "execute" | "submit";
};

export type ClientToolErrorHandler = (error: unknown, info: ClientToolErrorInfo) => void;

/** Config registrations of the agent bindings created by one `createPaiReact()`, by agent name. */
export type BindingRegistry = Map<string, readonly ClientToolRegistration[]>;

// Every provider over the same client shares one memory of attempted actions, so a page with
// two providers still never runs the same action twice.
const attemptedByClient = new WeakMap<object, Set<string>>();
const jsonSchemaCache = new WeakMap<object, Promise<JsonObject>>();
const SCHEMA_SYMBOL = Symbol.for("vercel.ai.schema");

function isConvertibleSchema(schema: object): boolean {
  return "~standard" in schema || SCHEMA_SYMBOL in schema;
}

/** JSON Schema of a Zod/Standard/AI SDK schema (cached per schema object), or a plain JSON Schema as is. */
function snapshotSchema(schema: unknown, toolName: string, key: string): Promise<JsonObject> {
  if (typeof schema !== "object" || schema === null || Array.isArray(schema)) {
    return Promise.reject(
      new PaiError(
        "INVALID_DEFINITION",
        `Client tool "${toolName}" needs ${key} as a Zod schema, a Standard Schema or a JSON Schema object.`,
      ),
    );
  }
  if (!isConvertibleSchema(schema)) return Promise.resolve(schema as JsonObject);
  let cached = jsonSchemaCache.get(schema);
  if (!cached) {
    // The SDK's own converter, imported from its small utilities package: `@pai/core`'s
    // `toJsonSchema` lives beside the runtime, which would pull the AI SDK's server code and the
    // scheduler's date library into every browser bundle that uses client tools.
    cached = Promise.resolve(asSchema(schema as Parameters<typeof asSchema>[0]).jsonSchema).then(
      (json) => json as JsonObject,
    );
    jsonSchemaCache.set(schema, cached);
  }
  return cached;
}

async function toSnapshot(definition: ClientToolDefinitionInput): Promise<ClientToolSnapshot> {
  const [inputSchema, outputSchema] = await Promise.all([
    snapshotSchema(definition.inputSchema, definition.name, "inputSchema"),
    definition.outputSchema === undefined
      ? undefined
      : snapshotSchema(definition.outputSchema, definition.name, "outputSchema"),
  ]);
  return {
    name: definition.name,
    description: definition.description,
    inputSchema,
    ...(outputSchema ? { outputSchema } : {}),
  };
}

type Observed = { count: number; stop: () => void };

/**
 * The local state of one `Pai.Provider`: mounted registrations, the threads this client
 * observes, and automatic execution of client tools for exactly those threads.
 */
export class PaiSession {
  readonly client: PaiClient;
  readonly #bindings: BindingRegistry;
  readonly #hooks = new Set<ClientToolRegistration>();
  readonly #listeners = new Set<() => void>();
  readonly #observed = new Map<string, Observed>();
  readonly #attempted: Set<string>;
  readonly #wrapped = new WeakMap<PendingActionView, PendingActionView>();
  #version = 0;
  onError: ClientToolErrorHandler;

  constructor(client: PaiClient, bindings: BindingRegistry, onError?: ClientToolErrorHandler) {
    this.client = client;
    this.#bindings = bindings;
    this.onError = onError ?? defaultOnError;
    let attempted = attemptedByClient.get(client);
    if (!attempted) {
      attempted = new Set();
      attemptedByClient.set(client, attempted);
    }
    this.#attempted = attempted;
  }

  /** Bumped whenever registrations change, for `useSyncExternalStore`. */
  getVersion = (): number => this.#version;

  subscribe = (listener: () => void): (() => void) => {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  };

  thread(threadId: string): ThreadClient {
    return this.client.thread(threadId);
  }

  /** Adds a mounted registration; the returned function removes it (on unmount). */
  register(registration: ClientToolRegistration): () => void {
    this.#hooks.add(registration);
    this.#changed();
    return () => {
      if (this.#hooks.delete(registration)) this.#changed();
    };
  }

  /** Tells renderers that a registration's handlers changed (a new render closure). */
  touch(): void {
    this.#version += 1;
    for (const listener of [...this.#listeners]) listener();
  }

  /**
   * The registration that handles `toolName` on a thread: hooks scoped to the thread first,
   * then provider-wide hooks (newest first), then the agent binding's config.
   */
  resolve(
    threadId: string,
    agentId: string,
    toolName: string,
    kind: "execute" | "render",
  ): ClientToolRegistration | undefined {
    const has = (registration: ClientToolRegistration) =>
      registration.agent === agentId &&
      registration.toolName === toolName &&
      registration[kind]() !== undefined;
    const hooks = [...this.#hooks].reverse();
    return (
      hooks.find((registration) => registration.threadId === threadId && has(registration)) ??
      hooks.find((registration) => registration.threadId === null && has(registration)) ??
      (this.#bindings.get(agentId) ?? []).find(has)
    );
  }

  /** The frontend-defined tools in scope for a thread, as the serializable snapshot a request carries. */
  async clientToolsFor(threadId: string): Promise<ClientToolSnapshot[]> {
    const agentId = await this.#agentOf(threadId);
    const byName = new Map<string, ClientToolDefinitionInput>();
    const add = (registration: ClientToolRegistration) => {
      if (registration.agent !== agentId || byName.has(registration.toolName)) return;
      const definition = registration.definition();
      if (definition) byName.set(registration.toolName, definition);
    };
    const hooks = [...this.#hooks].reverse();
    for (const registration of hooks) if (registration.threadId === threadId) add(registration);
    for (const registration of hooks) if (registration.threadId === null) add(registration);
    for (const registration of this.#bindings.get(agentId) ?? []) add(registration);
    return Promise.all([...byName.values()].map(toSnapshot));
  }

  /** The action with `submit` carrying this session's client-tool snapshot. Stable per view. */
  wrapAction(threadId: string, view: PendingActionView): PendingActionView {
    let wrapped = this.#wrapped.get(view);
    if (!wrapped) {
      wrapped = {
        ...view,
        submit: async (payload, options = {}) =>
          view.submit(payload, {
            ...options,
            clientTools: options.clientTools ?? (await this.clientToolsFor(threadId)),
          }),
      };
      this.#wrapped.set(view, wrapped);
    }
    return wrapped;
  }

  /**
   * Marks a thread as observed by this client: keeps it watched and answers its client-tool
   * actions with mounted handlers. Reference counted; the returned function releases it.
   */
  observe(threadId: string): () => void {
    let observed = this.#observed.get(threadId);
    if (!observed) {
      const thread = this.thread(threadId);
      const stopWatch = thread.watch();
      const unsubscribe = thread.subscribe(() => this.#scan(threadId));
      observed = {
        count: 0,
        stop: () => {
          unsubscribe();
          stopWatch();
        },
      };
      this.#observed.set(threadId, observed);
      this.#scan(threadId);
    }
    const entry = observed;
    entry.count += 1;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      entry.count -= 1;
      if (entry.count === 0) {
        entry.stop();
        this.#observed.delete(threadId);
      }
    };
  }

  async #agentOf(threadId: string): Promise<string> {
    const thread = this.thread(threadId);
    const row = thread.getState().thread ?? (await thread.refresh()).thread;
    if (!row) throw new PaiError("NOT_FOUND", `Thread ${threadId} could not be loaded.`);
    return row.agentId;
  }

  #changed(): void {
    this.touch();
    // A handler mounted after an action appeared may answer it now.
    for (const threadId of this.#observed.keys()) this.#scan(threadId);
  }

  #scan(threadId: string): void {
    const state = this.thread(threadId).getState();
    if (!state.thread) return;
    const agentId = state.thread.agentId;
    for (const action of state.pending) {
      // Only output actions belong to client tools; named suspensions are answered by people or apps.
      if (action.origin.suspendName !== undefined) continue;
      const key = `${threadId}\u0000${action.ref.actionId}`;
      if (this.#attempted.has(key)) continue;
      const registration = this.resolve(threadId, agentId, action.origin.toolName, "execute");
      const execute = registration?.execute();
      if (!execute) continue;
      this.#attempted.add(key);
      void this.#run(threadId, this.wrapAction(threadId, action), execute);
    }
  }

  async #run(threadId: string, action: PendingActionView, execute: UntypedExecute): Promise<void> {
    const info = (phase: ClientToolErrorInfo["phase"]): ClientToolErrorInfo => ({
      threadId,
      toolName: action.origin.toolName,
      actionId: action.ref.actionId,
      phase,
    });
    // If the tool answers through the action itself (fail, or its own submit), nothing more is sent.
    let answered = false;
    const tracked: PendingActionView = {
      ...action,
      submit: (payload, options) => {
        answered = true;
        return action.submit(payload, options);
      },
      cancel: (input) => {
        answered = true;
        return action.cancel(input);
      },
      fail: (error) => {
        answered = true;
        return action.fail(error);
      },
    };
    let output: unknown;
    try {
      output = await execute(action.input, {
        threadId,
        toolCallId: action.origin.toolCallId,
        action: tracked,
      });
    } catch (error) {
      this.onError(error, info("execute"));
      return;
    }
    if (answered) return;
    try {
      await action.submit(output);
    } catch (error) {
      this.onError(error, info("submit"));
    }
  }
}

function defaultOnError(error: unknown, info: ClientToolErrorInfo): void {
  console.error(
    `PAI client tool "${info.toolName}" could not answer action ${info.actionId} (${info.phase}): ${getErrorMessage(error)}. The action stays pending; answer it from a renderer or another client.`,
  );
}
