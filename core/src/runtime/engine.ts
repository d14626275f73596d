import { PaiError } from "../errors/pai-error.js";
import { type JsonObject, type JsonValue, normalizeJson } from "../json/json-value.js";
import type { FilesV1 } from "../ports/files.js";
import { createMemoryNotifier } from "../ports/memory-notifier.js";
import type { NotifierV1 } from "../ports/notifier.js";
import { decided } from "../state/deciders/decision.js";
import { decideCancelActiveRun, decideStartRun } from "../state/deciders/run-deciders.js";
import type { ClientToolSnapshot, MessageRow, ThreadRow } from "../state/rows.js";
import { CapabilityRegistry } from "./capability-bindings.js";
import { validateClientToolSnapshot } from "./client-tool-snapshot.js";
import type { RuntimeHooks, RuntimeScope, RuntimeToolRegistration } from "./definition-shapes.js";
import { ModelHistory } from "./model-history.js";
import { performEffects } from "./perform-effects.js";
import { type ResolveRequest, resolveAction } from "./resolve-action.js";
import { RunDriver } from "./run-driver.js";
import { LeaseLostError, RunLeases } from "./run-leases.js";
import { RunRegistry } from "./run-registry.js";
import { RunWriter } from "./run-writer.js";
import type { RuntimeCommands } from "./runtime-commands.js";
import type {
  CreateThreadInput,
  RegisteredAgent,
  RuntimeCore,
  StartOrQueueInput,
  TriggerInput,
} from "./runtime-core.js";
import type { RuntimeEvent } from "./runtime-events.js";
import type { RuntimeErrorReport, RuntimeOptions } from "./runtime-options.js";
import { ThreadStore } from "./thread-store.js";

/**
 * The runtime of a set of agents on one storage, assembled from its parts: the store and its
 * one writer (`run-writer.ts`), leases, the registry of in-flight work, the run driver
 * (`run-driver.ts`: model steps, tool calls), answers to pending actions (`resolve-action.ts`)
 * and the effects a winning commit carries out (`perform-effects.ts`). Here: the agent
 * registry and the thread-level commands (create, start, trigger, cancel). Not public: the
 * service reaches it through `RuntimeCommands`.
 */
export class Engine implements RuntimeCore, RuntimeCommands {
  readonly store: ThreadStore;
  readonly writer: RunWriter;
  readonly leases: RunLeases;
  readonly registry = new RunRegistry();
  readonly notifier: NotifierV1;
  readonly files: FilesV1 | undefined;
  readonly capabilities: CapabilityRegistry;
  readonly options: RuntimeOptions;
  readonly hooks: RuntimeHooks | undefined;
  readonly history = new ModelHistory();
  readonly instanceId: string;
  readonly generateId: () => string;
  readonly watchCatchUpMs: number;
  readonly #agents: Map<string, RegisteredAgent>;
  readonly #driver: RunDriver;
  #closed = false;

  constructor(agents: RegisteredAgent[], options: RuntimeOptions) {
    this.options = options;
    // The runtime reads hooks through its loose view of definitions, as it reads agents.
    this.hooks = options.hooks as RuntimeHooks | undefined;
    this.#agents = new Map(agents.map((agent) => [agent.id, agent]));
    this.notifier = options.notifier ?? options.storage.notifier ?? createMemoryNotifier();
    this.files = options.files;
    this.generateId = options.generateId ?? (() => globalThis.crypto.randomUUID());
    this.instanceId = options.instanceId ?? `pai-${globalThis.crypto.randomUUID()}`;
    this.watchCatchUpMs = watchCatchUpMs(options.watchCatchUpMs);
    this.store = new ThreadStore(options.storage, this.notifier, options.clock ?? (() => new Date()));
    this.capabilities = new CapabilityRegistry(options.capabilities ?? {}, (error) =>
      this.reportError({ error, phase: "hook" }),
    );
    this.leases = new RunLeases(
      options.storage,
      this.store.clock,
      this.instanceId,
      options.leaseMs ?? 30_000,
      // Another instance adopted the run: stop our tools and never write for it again.
      (runId) => this.registry.abort(runId, new LeaseLostError(runId)),
      (error, threadId, runId) => this.reportError({ error, phase: "run", threadId, runId }),
    );
    this.#driver = new RunDriver(this);
    this.writer = new RunWriter(this.store, this.leases, (effects, committed, origin) =>
      performEffects(this, this.#driver, effects, committed, origin),
    );
    this.#validateBindings();
  }

  get closed(): boolean {
    return this.#closed;
  }

  // ---------------------------------------------------------------- registry of agents

  get agentIds(): string[] {
    return [...this.#agents.keys()];
  }

  agent(agentId: string): RegisteredAgent {
    const agent = this.#agents.get(agentId);
    if (!agent) {
      throw new PaiError(
        "NOT_FOUND",
        `No agent "${agentId}" is registered. Registered agents: ${this.agentIds.join(", ") || "none"}.`,
      );
    }
    return agent;
  }

  defaultAgentId(): string {
    const first = this.agentIds[0];
    if (!first) throw new PaiError("INVALID_DEFINITION", "No agents are registered.");
    return first;
  }

  #validateBindings(): void {
    const bindings = this.options.capabilities ?? {};
    const visit = (ownerName: string, registration: RuntimeToolRegistration, agentId: string) => {
      for (const [alias, capability] of Object.entries(registration.tool.capabilities ?? {})) {
        if (!bindings[capability.id]) {
          throw new PaiError(
            "INVALID_DEFINITION",
            `Tool "${ownerName}" (${registration.tool.id}) of agent "${agentId}" declares capability "${capability.id}" (as ctx.capabilities.${alias}) but no binding was given. Pass createAgentRuntime({ capabilities: { "${capability.id}": binding } }).`,
          );
        }
      }
      for (const [childName, child] of Object.entries(registration.tool.tools ?? {})) {
        visit(`${ownerName}.${childName}`, child, agentId);
      }
    };
    for (const { id, definition } of this.#agents.values()) {
      for (const [name, registration] of Object.entries(definition.tools)) visit(name, registration, id);
    }
  }

  // ---------------------------------------------------------------- shared helpers

  /** Normalizes a value to bounded JSON (`jsonLimits`), refusing it with INVALID_INPUT otherwise. */
  json(value: unknown, label?: string): JsonValue {
    return normalizeJson(value, label, this.options.jsonLimits);
  }

  now(): string {
    return this.store.now();
  }

  reportError(report: RuntimeErrorReport): void {
    try {
      this.options.onRuntimeError?.(report);
    } catch {
      // A failing error reporter must never take the runtime down.
    }
  }

  /** Reports a runtime event to observers; an observer failure never disturbs the run. */
  emit(event: RuntimeEvent): void {
    for (const observer of this.options.observers ?? []) {
      try {
        const result = observer(event);
        if (result && typeof (result as Promise<void>).catch === "function") {
          (result as Promise<void>).catch((error) =>
            this.reportError({ error, phase: "hook", threadId: event.threadId, runId: event.runId }),
          );
        }
      } catch (error) {
        this.reportError({ error, phase: "hook", threadId: event.threadId, runId: event.runId });
      }
    }
  }

  waitForIdle(threadId: string): Promise<void> {
    return this.registry.waitForIdle(threadId);
  }

  /** Test hook: whether this process holds any state for a thread. */
  holdsThread(threadId: string): boolean {
    return this.registry.holdsThread(threadId);
  }

  // ---------------------------------------------------------------- runs

  continueRun(threadId: string, runId: string, identity: unknown, scope: RuntimeScope): Promise<void> {
    return this.#driver.continueRun(threadId, runId, identity, scope);
  }

  failRun(threadId: string, runId: string, error: unknown): Promise<void> {
    return this.#driver.failRun(threadId, runId, error);
  }

  recover(options: { limit?: number } = {}): Promise<number> {
    return this.#driver.recover(options);
  }

  /** Starts a run now, or queues it behind the active run, for the message that triggers it. */
  async startOrQueueRun(
    input: StartOrQueueInput,
  ): Promise<{ runId: string; version: number; queued: boolean }> {
    const runId = this.generateId();
    // Held across the commit so the snapshot it produces stays cached for the driver.
    const release = this.store.hold(input.threadId);
    try {
      const identity = toJsonOrNull(input.identity);
      const committed = await this.writer.commit(
        input.threadId,
        (snapshot, now) =>
          decideStartRun(
            snapshot,
            {
              runId,
              message: input.message,
              trigger: input.trigger,
              clientTools: input.clientTools,
              clientData: input.clientData,
              identity,
              queueIfBusy: input.queueIfBusy,
              cancelPending: input.cancelPending ?? false,
            },
            now,
          ),
        {
          ...(input.snapshot ? { fresh: input.snapshot } : {}),
          origin: { identity: input.identity, scope: input.scope },
        },
      );
      return { runId, version: committed.version, queued: committed.value.queued };
    } finally {
      release();
    }
  }

  /** Cancels the thread's active run (if any); pending work becomes model-visible cancellations. */
  async cancelRunOf(threadId: string, reason: string | null): Promise<{ version: number }> {
    const committed = await this.writer.commit(threadId, (snapshot, now) =>
      decideCancelActiveRun(snapshot, reason, now),
    );
    return { version: committed.version };
  }

  /** Answers a pending action (see `resolve-action.ts`). */
  resolve(input: ResolveRequest) {
    return resolveAction(this, input);
  }

  // ---------------------------------------------------------------- threads

  async createThread(input: CreateThreadInput): Promise<ThreadRow> {
    this.agent(input.agentId);
    const committed = await this.writer.commit(
      input.threadId,
      (_snapshot, now) =>
        decided(
          [
            {
              type: "thread-updated",
              thread: {
                threadId: input.threadId,
                scopeKey: input.scope.scopeKey,
                userKey: input.scope.userKey ?? null,
                agentId: input.agentId,
                title: input.title,
                status: "idle",
                version: 0,
                activeRunId: null,
                metadata: input.metadata,
                createdAt: now,
                updatedAt: now,
              },
            },
          ],
          [],
          undefined,
        ),
      { create: true },
    );
    return committed.snapshot.thread;
  }

  userMessage(
    threadId: string,
    message: { text: string; id?: string } | { id?: string; parts: unknown[] },
  ): MessageRow {
    const messageId = message.id ?? this.generateId();
    const now = this.now();
    const parts = "text" in message ? [{ type: "text", text: message.text }] : message.parts;
    return {
      threadId,
      messageId,
      position: 0,
      role: "user",
      message: { id: messageId, role: "user", parts: parts as never },
      runId: null,
      createdAt: now,
      updatedAt: now,
    };
  }

  /** Validates a request's frontend-defined client tools. */
  validateClientTools(agentId: string, tools: ClientToolSnapshot[] | undefined): ClientToolSnapshot[] {
    return validateClientToolSnapshot(tools, {
      backendTools: this.agent(agentId).definition.tools,
      maxBytes: this.options.maxClientToolsBytes ?? 64 * 1024,
    });
  }

  /** Appends a trusted notification and continues generation (queued while a run is active). */
  async trigger(input: TriggerInput): Promise<{ runId: string; queued: boolean }> {
    const data = input.data === undefined ? undefined : this.json(input.data, "Trigger data");
    const text = [input.notification ?? "", data === undefined ? "" : JSON.stringify(data)]
      .filter((chunk) => chunk.length > 0)
      .join("\n\n");
    const message = this.userMessage(input.threadId, { text: text || "(notification)" });
    message.message = {
      ...message.message,
      metadata: {
        pai: { kind: "notification", hidden: input.hidden ?? false, ...(data !== undefined ? { data } : {}) },
      },
    };
    const result = await this.startOrQueueRun({
      threadId: input.threadId,
      identity: input.identity,
      scope: input.scope,
      message,
      trigger: {
        type: "trigger",
        messageId: message.messageId,
        ...(input.notification ? { notification: input.notification } : {}),
        ...(data !== undefined ? { data } : {}),
        ...(input.hidden !== undefined ? { hidden: input.hidden } : {}),
      },
      clientTools: input.clientTools ?? [],
      clientData: null,
      queueIfBusy: true,
    });
    return { runId: result.runId, queued: result.queued };
  }

  // ---------------------------------------------------------------- shutdown

  async close(): Promise<void> {
    this.#closed = true;
    this.registry.abortAll(new PaiError("CONFLICT", "The runtime closed."));
    await this.registry.waitForAll().catch(() => undefined);
    await this.leases.releaseAll();
    await this.capabilities.closeAll();
  }
}

function toJsonOrNull(value: unknown): JsonValue | null {
  if (value === undefined) return null;
  try {
    return normalizeJson(value);
  } catch {
    return null;
  }
}

export type { JsonObject, RegisteredAgent };

/** Between 10 ms and a day: a larger value (or Infinity) would never catch up, a tiny one polls. */
function watchCatchUpMs(value: number | undefined): number {
  if (value === undefined) return 15_000;
  if (!Number.isFinite(value) || value < 10 || value > 86_400_000) {
    throw new PaiError(
      "INVALID_DEFINITION",
      `watchCatchUpMs must be a number of milliseconds between 10 and 86400000, got ${value}.`,
    );
  }
  return value;
}
