import { PaiError } from "../errors/pai-error.js";
import { type JsonObject, type JsonValue, normalizeJson } from "../json/json-value.js";
import type { DispatchJob } from "../ports/dispatch.js";
import type { FilesV1 } from "../ports/files.js";
import { createMemoryNotifier } from "../ports/memory-notifier.js";
import type { NotifierV1 } from "../ports/notifier.js";
import { decideCancelActiveRun, type StartRunInput } from "../state/deciders/run-deciders.js";
import type { ClientToolSnapshot, MessageRow, ScheduleRow, ThreadRow } from "../state/rows.js";
import { scheduleTiming } from "../state/wake.js";
import { CapabilityRegistry } from "./capability-bindings.js";
import { validateClientToolSnapshot } from "./client-tool-snapshot.js";
import type { RuntimeHooks, RuntimeScope, RuntimeToolRegistration } from "./definition-shapes.js";
import { handleDispatchedJob, wakeDueThreads } from "./dispatched-jobs.js";
import { notificationMessageRow, userMessageRow } from "./message-rows.js";
import { ModelHistory } from "./model-history.js";
import { performEffects } from "./perform-effects.js";
import { type ResolveRequest, resolveAction } from "./resolve-action.js";
import { RunDispatch } from "./run-dispatch.js";
import { RunDriver } from "./run-driver.js";
import { LeaseLostError, RunLeases } from "./run-leases.js";
import { RunRegistry } from "./run-registry.js";
import { type PaiWorker, startWorker, type WorkerOptions } from "./run-worker.js";
import { RunWriter } from "./run-writer.js";
import type { RuntimeCommands } from "./runtime-commands.js";
import type {
  CreateThreadInput,
  RegisteredAgent,
  RuntimeCore,
  ScheduledTrigger,
  StartOrQueueInput,
  TriggerInput,
} from "./runtime-core.js";
import type { RuntimeEvent } from "./runtime-events.js";
import type { RuntimeErrorReport, RuntimeOptions } from "./runtime-options.js";
import { createThread, startOrQueueRun } from "./thread-commands.js";
import {
  type CreateScheduleInput,
  cancelSchedule,
  createSchedule,
  scheduledRunStart,
} from "./thread-schedules.js";
import { ThreadStore } from "./thread-store.js";
import { wakeThread } from "./wake-thread.js";

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
  readonly dispatch: RunDispatch;
  #closed = false;
  #handingBack = false;

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
    this.dispatch = new RunDispatch(this, this.#driver, options.dispatch);
    this.writer = new RunWriter(
      this.store,
      this.leases,
      (effects, committed, origin) => performEffects(this, this.#driver, effects, committed, origin),
      () => this.dispatch.drivesHere,
    );
    this.#validateBindings();
    // Jobs of the default dispatch never leave this process: it is its own worker (wake-ups).
    if (this.dispatch.drivesHere) {
      void this.dispatch.port.work((job) => this.handleJob(job), { concurrency: 8 });
    }
  }

  get closed(): boolean {
    return this.#closed;
  }

  get handingBack(): boolean {
    return this.#handingBack;
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

  hasAgent(agentId: string): boolean {
    return this.#agents.has(agentId);
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

  continueRun(
    threadId: string,
    runId: string,
    identity: unknown,
    scope: RuntimeScope,
    options: { wait?: boolean } = {},
  ): Promise<void> {
    return this.#driver.continueRun(threadId, runId, identity, scope, options);
  }

  /** Starts a queued run (a dispatched job for a run that is still queued). */
  startQueued(threadId: string): Promise<void> {
    return this.#driver.startQueued(threadId);
  }

  failRun(threadId: string, runId: string, error: unknown): Promise<void> {
    return this.#driver.failRun(threadId, runId, error);
  }

  /**
   * Adopts runs whose lease expired (driving them here, or sending them to the engine) and
   * wakes threads whose deadlines or schedules are due. Returns the runs adopted.
   */
  async recover(options: { limit?: number } = {}): Promise<number> {
    const adopted = await this.#driver.recover(options);
    await wakeDueThreads(this, options.limit ?? 50);
    return adopted;
  }

  /** Acts on the deadlines and schedules that are due on a thread (see `wake-thread.ts`). */
  wake(threadId: string): Promise<{ resolved: number; fired: number }> {
    return this.registry.track(threadId, wakeThread(this, threadId));
  }

  handleJob(job: DispatchJob): Promise<void> {
    return handleDispatchedJob(this, this.#driver, job);
  }

  /** Starts working the jobs of this runtime's dispatch (see `run-worker.ts`). */
  startWorker(options: WorkerOptions = {}): Promise<PaiWorker> {
    if (this.#closed) throw new PaiError("CONFLICT", "The runtime is closed.");
    return startWorker(this, options);
  }

  // ---------------------------------------------------------------- schedules

  scheduledMessage(threadId: string, schedule: { message: string; data: unknown }): StartRunInput {
    return scheduledRunStart(this, threadId, schedule);
  }

  createSchedule(input: CreateScheduleInput): Promise<ScheduleRow> {
    return createSchedule(this, input);
  }

  cancelSchedule(input: { threadId: string; scheduleId: string }): Promise<ScheduleRow> {
    return cancelSchedule(this, input);
  }

  /** Starts a run now, or queues it behind the active run, for the message that triggers it. */
  startOrQueueRun(input: StartOrQueueInput): Promise<{ runId: string; version: number; queued: boolean }> {
    return startOrQueueRun(this, input);
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

  /** Creates a thread, with its first message and run when `start` is given. */
  createThread(input: CreateThreadInput): Promise<ThreadRow> {
    return createThread(this, input);
  }

  userMessage(
    threadId: string,
    message: { text: string; id?: string } | { id?: string; parts: unknown[] },
  ): MessageRow {
    return userMessageRow(threadId, message, this.generateId, this.now());
  }

  /** Validates a request's frontend-defined client tools. */
  validateClientTools(agentId: string, tools: ClientToolSnapshot[] | undefined): ClientToolSnapshot[] {
    return validateClientToolSnapshot(tools, {
      backendTools: this.agent(agentId).definition.tools,
      maxBytes: this.options.maxClientToolsBytes ?? 64 * 1024,
    });
  }

  /** A trusted notification as the user-role message the model reads (triggers, schedules). */
  notificationMessage(
    threadId: string,
    input: { notification: string | undefined; data: JsonValue | undefined; hidden: boolean },
  ): MessageRow {
    return notificationMessageRow(this.userMessage(threadId, { text: "" }), input);
  }

  /** Appends a trusted notification and continues generation (queued while a run is active). */
  async trigger(input: TriggerInput): Promise<{ runId: string; queued: boolean } | ScheduledTrigger> {
    if (input.at !== undefined || input.cron !== undefined) {
      const schedule = await this.createSchedule({
        threadId: input.threadId,
        timing: scheduleTiming(input),
        message: input.notification ?? "(notification)",
        ...(input.data !== undefined ? { data: input.data } : {}),
      });
      return { scheduleId: schedule.scheduleId, nextAt: schedule.nextAt };
    }
    const data = input.data === undefined ? undefined : this.json(input.data, "Trigger data");
    const message = this.notificationMessage(input.threadId, {
      notification: input.notification,
      data,
      hidden: input.hidden ?? false,
    });
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

  /**
   * A draining worker's deadline passed: stop the runs it still drives without failing them,
   * and free their leases so another worker adopts them at once.
   */
  async handBack(): Promise<void> {
    this.#handingBack = true;
    this.#closed = true;
    this.registry.abortAll(new PaiError("CONFLICT", "The worker handed the run back."));
    await this.registry.waitForAll().catch(() => undefined);
    await this.leases.releaseAll();
  }

  async close(): Promise<void> {
    this.#closed = true;
    this.registry.abortAll(new PaiError("CONFLICT", "The runtime closed."));
    await this.registry.waitForAll().catch(() => undefined);
    await this.leases.releaseAll();
    await this.capabilities.closeAll();
    // The default dispatch is the runtime's own; one the host passed in is the host's to close.
    if (!this.options.dispatch) await this.dispatch.port.close?.();
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
