import type { Identity, Scope } from "../definitions/identity.js";
import { PaiError } from "../errors/pai-error.js";
import type { JsonObject } from "../json/json-value.js";
import { agentManifest } from "../manifest/agent-manifest.js";
import { applyPlugins } from "../plugins/apply-plugins.js";
import type { AnyPaiPlugin, WithPlugins } from "../plugins/plugin-types.js";
import type { RuntimeAgentDefinition } from "../runtime/definition-shapes.js";
import { Engine } from "../runtime/engine.js";
import type { PaiWorker, WorkerOptions } from "../runtime/run-worker.js";
import type { RuntimeOptions, ScopeOption } from "../runtime/runtime-options.js";
import { idProblem, MAX_STORED_ID_LENGTH } from "../service/client-id.js";
import { createService } from "../service/create-service.js";
import type { PaiService } from "../service/service-types.js";
import { WatchSlots } from "../service/watch-slots.js";
import type { ScheduleRow, ThreadRow } from "../state/rows.js";
import { scheduleTiming } from "../state/wake.js";
import { attachInternals } from "./internals.js";

/** Anything `defineAgent` returns (the runtime reads only its runtime fields). */
export type AgentLike = { readonly kind: "agent"; readonly name?: string };

export type CreatePaiOptions<
  TAgents extends Record<string, AgentLike>,
  TIdentity = Identity,
> = RuntimeOptions &
  ScopeOption<TIdentity> & {
    /** Agents by registry id; `ctx.agentId` is that id and `ctx.agents` can run the others. */
    agents: TAgents;
  };

export type CreateAgentRuntimeOptions<TAgent extends AgentLike, TIdentity = Identity> = RuntimeOptions &
  ScopeOption<TIdentity> & {
    agent: TAgent;
  };

/** Agents with the tools of the given plugins (see `WithPlugins`). */
export type AgentsWithPlugins<
  TAgents extends Record<string, AgentLike>,
  TPlugins extends readonly AnyPaiPlugin[],
> = { [K in keyof TAgents]: WithPlugins<TAgents[K], TPlugins> };

/** The union of a registry's agents (type-only; lets a transport type action payloads). */
export type AgentOf<TAgents> = TAgents extends Record<string, infer TAgent> ? TAgent : never;

/** A running PAI instance: the service API plus trusted operations and lifecycle. */
export type Pai<
  TAgents extends Record<string, AgentLike> = Record<string, AgentLike>,
  TIdentity = Identity,
> = {
  /** The transport-neutral, identity-checked API every transport exposes, typed by the identity `scope` reads. */
  readonly service: PaiService<TIdentity, AgentOf<TAgents>>;
  readonly agents: TAgents;
  /** Trusted server-side operations (never exposed to clients by a transport). */
  readonly trusted: {
    /**
     * Creates a thread in a scope the server chose, optionally with a server-chosen id (e.g. one
     * thread per order). The public `threads.create` never takes an id: that would let one tenant
     * probe or reserve another's. A taken id is CONFLICT here.
     */
    createThread(input: {
      scope: Scope;
      threadId?: string;
      agentId?: string;
      title?: string | null;
      metadata?: JsonObject | null;
    }): Promise<ThreadRow>;
    /** Appends a notification and continues generation; queued while a run is active. */
    trigger(input: {
      threadId: string;
      scope: Scope;
      identity?: unknown;
      notification?: string;
      data?: unknown;
      hidden?: boolean;
    }): Promise<{ runId: string; queued: boolean }>;
    /**
     * Schedules a trigger: at `at`, or on every instant of a five-field `cron` expression (in
     * `timezone`, default UTC), the thread gets a run whose model reads `message`. Survives
     * restarts (it is part of the thread's stored state) and fires once per instant, whichever
     * process wakes the thread. Visible in `thread.schedules`.
     */
    schedule(input: {
      threadId: string;
      scope: Scope;
      /** Defaults to a generated id; an id the thread already has is CONFLICT. */
      scheduleId?: string;
      at?: Date | string;
      cron?: string;
      timezone?: string;
      message: string;
      data?: unknown;
    }): Promise<ScheduleRow>;
    /** Cancels an active schedule (NOT_FOUND for an unknown id, CONFLICT once it ended). */
    cancelSchedule(input: { threadId: string; scope: Scope; scheduleId: string }): Promise<ScheduleRow>;
  };
  /**
   * Works the jobs of the runtime's dispatch: drives runs and wakes due threads, at most
   * `concurrency` at once. Call it in worker processes when `dispatch` is a job engine (an API
   * process never calls it and never drives a run); with the default in-process dispatch this
   * process already works its own jobs. `stop()` drains (see `WorkerOptions.drainMs`).
   */
  startWorker(options?: WorkerOptions): Promise<PaiWorker>;
  /** Resolves once this process has no more in-flight work for the thread (tests, scripts). */
  waitForIdle(threadId: string): Promise<void>;
  /** Adopts runs of crashed processes (expired leases). Returns how many were adopted. */
  recover(options?: { limit?: number }): Promise<number>;
  /** Polls `recover` every `intervalMs` until `close()`. */
  startRecovery(options?: { intervalMs?: number }): () => void;
  /** Stops in-flight runs of this process, releases leases and capability facades. */
  close(): Promise<void>;
};

/**
 * The scope of an identity that carries its own `scopeKey` (and optionally `userKey`). Used
 * when no `scope` option is given; an identity without a `scopeKey` is refused, never shared.
 */
export function scopeFromIdentity(identity: { scopeKey: string; userKey?: string | null }): Scope {
  if (identity && typeof identity === "object") {
    const record = identity as Record<string, unknown>;
    if (typeof record.scopeKey === "string" && record.scopeKey.length > 0) {
      return {
        scopeKey: record.scopeKey,
        userKey: typeof record.userKey === "string" ? record.userKey : null,
      };
    }
  }
  throw new PaiError(
    "FORBIDDEN",
    "The request has no scope: the identity has no scopeKey and the server was created without a scope option. Pass scope: (identity) => ({ scopeKey, userKey }) to createPai.",
  );
}

/** Creates a PAI instance for a registry of agents sharing one storage. */
export function createPai<
  const TAgents extends Record<string, AgentLike>,
  const TPlugins extends readonly AnyPaiPlugin[] = [],
  TIdentity = Identity,
>(
  options: CreatePaiOptions<TAgents, TIdentity> & { plugins?: TPlugins },
): Pai<AgentsWithPlugins<TAgents, TPlugins>, TIdentity> {
  const entries = Object.entries(options.agents ?? {});
  if (entries.length === 0) {
    throw new PaiError(
      "INVALID_DEFINITION",
      "createPai needs at least one agent: createPai({ agents: { main: agent } }).",
    );
  }
  for (const [id, agent] of entries) {
    if (!agent || (agent as { kind?: unknown }).kind !== "agent") {
      throw new PaiError(
        "INVALID_DEFINITION",
        `agents.${id} is not an agent definition. Create it with defineAgent().`,
      );
    }
  }
  if (options.storage?.specificationVersion !== "v1") {
    throw new PaiError(
      "INVALID_DEFINITION",
      "createPai needs a StorageV1 adapter, e.g. memoryStorage() from @pai/storage-memory or kyselyStorage() from @pai/storage-kysely.",
    );
  }
  if (options.download !== undefined && typeof options.download !== "function") {
    throw new PaiError(
      "INVALID_DEFINITION",
      "download must be an AI SDK download function (e.g. createDownload() from ai), or left out so that no file URL is fetched.",
    );
  }
  // Plugins are merged declaratively: copied agent definitions, merged bindings and observers.
  const applied = applyPlugins({
    agents: entries.map(([id, definition]) => ({
      id,
      definition: definition as unknown as RuntimeAgentDefinition,
    })),
    ...(options.capabilities ? { capabilities: options.capabilities } : {}),
    ...(options.observers ? { observers: options.observers } : {}),
    ...(options.plugins ? { plugins: options.plugins } : {}),
  });
  const engine = new Engine(applied.agents, {
    ...options,
    capabilities: applied.capabilities,
    observers: applied.observers,
  });
  // Trusted calls name a scope; a thread of another scope is as unknown to them as to a client.
  const requireInScope = async (threadId: string, scope: Scope) => {
    const snapshot = await engine.store.require(threadId);
    if (snapshot.thread.scopeKey !== scope.scopeKey) {
      throw new PaiError("NOT_FOUND", `Thread ${threadId} was not found.`);
    }
  };
  const agents = Object.fromEntries(
    applied.agents.map((agent) => [agent.id, agent.definition]),
  ) as unknown as AgentsWithPlugins<TAgents, TPlugins>;
  const resolveScope = (options as { scope?: (identity: never) => Scope | Promise<Scope> }).scope;
  const scopeOf = async (identity: unknown) => {
    const scope = await (resolveScope ?? scopeFromIdentity)(identity as never);
    if (
      !scope ||
      typeof scope.scopeKey !== "string" ||
      scope.scopeKey.length === 0 ||
      scope.scopeKey.length > 512 ||
      (scope.userKey != null && typeof scope.userKey !== "string")
    ) {
      throw new PaiError(
        "FORBIDDEN",
        "The request has no scope: the server's scope(identity) returned no scopeKey. Refuse unauthenticated requests before PAI, or return { scopeKey } for them.",
      );
    }
    return scope;
  };
  const service = createService<TIdentity, AgentOf<AgentsWithPlugins<TAgents, TPlugins>>>(
    engine,
    scopeOf,
    async (agentId) => {
      const manifest = await agentManifest(engine.agent(agentId).definition as never);
      return { agentId, ...manifest } as unknown as JsonObject;
    },
    new WatchSlots(options.maxWatchesPerUser),
  );
  const timers = new Set<ReturnType<typeof setInterval>>();
  const pai: Pai<AgentsWithPlugins<TAgents, TPlugins>, TIdentity> = {
    service,
    agents,
    trusted: {
      createThread: async (input) =>
        engine.createThread({
          threadId: input.threadId === undefined ? engine.generateId() : trustedThreadId(input.threadId),
          scope: input.scope,
          agentId: input.agentId ?? engine.defaultAgentId(),
          title: input.title ?? null,
          metadata: input.metadata == null ? null : (engine.json(input.metadata, "metadata") as JsonObject),
        }),
      trigger: async (input) => {
        await requireInScope(input.threadId, input.scope);
        // The trusted trigger takes no time (that is `schedule`), so it always starts or queues a run.
        return engine.trigger({ ...input, identity: input.identity ?? null }) as Promise<{
          runId: string;
          queued: boolean;
        }>;
      },
      schedule: async (input) => {
        await requireInScope(input.threadId, input.scope);
        const timing = scheduleTiming(input);
        return engine.createSchedule({
          threadId: input.threadId,
          timing,
          message: input.message,
          ...(input.scheduleId !== undefined ? { scheduleId: input.scheduleId } : {}),
          ...(input.data !== undefined ? { data: input.data } : {}),
        });
      },
      cancelSchedule: async (input) => {
        await requireInScope(input.threadId, input.scope);
        return engine.cancelSchedule(input);
      },
    },
    startWorker: (workerOptions) => engine.startWorker(workerOptions),
    waitForIdle: (threadId) => engine.waitForIdle(threadId),
    recover: (recoverOptions) => engine.recover(recoverOptions),
    startRecovery: (recoveryOptions = {}) => {
      const timer = setInterval(() => {
        void engine.recover().catch((error) => engine.reportError({ error, phase: "recovery" }));
      }, recoveryOptions.intervalMs ?? 5_000);
      timer.unref?.();
      timers.add(timer);
      return () => {
        clearInterval(timer);
        timers.delete(timer);
      };
    },
    close: async () => {
      for (const timer of timers) clearInterval(timer);
      timers.clear();
      await engine.close();
    },
  };
  attachInternals(pai, engine);
  return pai;
}

/**
 * Creates a runtime for one agent. Its registry id (`ctx.agentId`) is the agent's own
 * `name`, or `"agent"` when it has none.
 */
export function createAgentRuntime<
  const TAgent extends AgentLike,
  const TPlugins extends readonly AnyPaiPlugin[] = [],
  TIdentity = Identity,
>(
  options: CreateAgentRuntimeOptions<TAgent, TIdentity> & { plugins?: TPlugins },
): Pai<Record<string, WithPlugins<TAgent, TPlugins>>, TIdentity> {
  const { agent, ...rest } = options;
  if (!agent || (agent as { kind?: unknown }).kind !== "agent") {
    throw new PaiError(
      "INVALID_DEFINITION",
      "createAgentRuntime needs { agent } created with defineAgent().",
    );
  }
  const id = agent.name && agent.name.length > 0 ? agent.name : "agent";
  const registry = { ...rest, agents: { [id]: agent } as Record<string, TAgent> };
  return createPai<Record<string, TAgent>, TPlugins, TIdentity>(registry as never) as unknown as Pai<
    Record<string, WithPlugins<TAgent, TPlugins>>,
    TIdentity
  >;
}

export type { JsonObject };

/** A server-chosen thread id: stored, so it has the limits of a stored client id. */
function trustedThreadId(threadId: unknown): string {
  if (typeof threadId !== "string" || threadId.length === 0 || threadId.length > MAX_STORED_ID_LENGTH) {
    throw new PaiError(
      "INVALID_INPUT",
      `trusted.createThread: threadId must be a non-empty string of at most ${MAX_STORED_ID_LENGTH} characters.`,
    );
  }
  const problem = idProblem(threadId);
  if (problem) throw new PaiError("INVALID_INPUT", `trusted.createThread: threadId ${problem}`);
  return threadId;
}
