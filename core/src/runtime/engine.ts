import {
  jsonSchema,
  type LanguageModel,
  type ModelMessage,
  experimental_streamLanguageModelCall as streamLanguageModelCall,
  type ToolSet,
  type UIMessage,
} from "ai";
import { cachedSdkSchema } from "../definitions/cached-schema.js";
import { validatingJsonSchema } from "../definitions/json-schema-validation.js";
import { validateSchema } from "../definitions/schema.js";
import { getErrorMessage, PaiError, REDACTED_ERROR_MESSAGE } from "../errors/pai-error.js";
import { toolFailureDetails } from "../errors/tool-failure.js";
import { assertPlainKeys, type JsonObject, type JsonValue, normalizeJson } from "../json/json-value.js";
import type { FilesV1, SaveFileInput } from "../ports/files.js";
import { createMemoryNotifier } from "../ports/memory-notifier.js";
import type { NotifierV1 } from "../ports/notifier.js";
import type { Scope } from "../service/identity.js";
import type { ThreadEvent } from "../state/events.js";
import { parkIfBlocked } from "../state/park-run.js";
import type { ActionRow, ClientToolSnapshot, MessageRow, RunRow, ToolDataRow } from "../state/rows.js";
import { applyThreadEvent, type ThreadSnapshot } from "../state/snapshot.js";
import { findToolPart, isStoredToolPart } from "../state/tool-parts.js";
import {
  activeRun,
  analyzeRun,
  appendMessage,
  cancellationText,
  cancelRun,
  commitStep,
  interruptUnsettled,
  nextMessagePosition,
  pendingActions,
  resolveAction,
  setRunStatus,
  settleToolCall,
  startRun,
  suspendToolCall,
  type ToolOutcome,
  type Transition,
  writeToolData,
} from "../state/transitions.js";
import { actionRef, matchesKind, toSuspendHistoryItem } from "./action-views.js";
import { CapabilityRegistry } from "./capability-bindings.js";
import { validateClientToolSnapshot } from "./client-tool-snapshot.js";
import type { RuntimeAgentDefinition, RuntimeToolRegistration } from "./definition-shapes.js";
import { ModelHistory } from "./model-history.js";
import { RequestContext } from "./request-context.js";
import { LeaseLostError, RunLeases } from "./run-leases.js";
import type { RuntimeEvent } from "./runtime-events.js";
import type { RuntimeErrorReport, RuntimeOptions } from "./runtime-options.js";
import { ThreadStore } from "./thread-store.js";
import {
  applyAfterToolResult,
  buildChildTools,
  FatalHookError,
  resolveDescription,
  resolveEnabled,
  resolveToolContext,
  settleOutput,
} from "./tool-invoker.js";
import { failMarker, isFailMarker, isSuspendMarker, suspendMarker } from "./tool-results.js";

/** One agent as registered in an engine, with its registry id. */
export type RegisteredAgent = { id: string; definition: RuntimeAgentDefinition };

type Driver = { again: boolean; promise: Promise<void> };

type CallEntry = { type: "initial" } | { type: "resume"; action: ActionRow; resume: unknown };

/**
 * The runtime: owns the run loop, tool execution and pending-action resolution for a set of
 * agents on one storage. All state lives in storage; this object keeps only in-flight work.
 */
export class Engine {
  readonly store: ThreadStore;
  readonly notifier: NotifierV1;
  readonly files: FilesV1 | undefined;
  readonly capabilities: CapabilityRegistry;
  readonly instanceId: string;
  readonly generateId: () => string;
  readonly #agents: Map<string, RegisteredAgent>;
  readonly #options: RuntimeOptions;
  readonly #drivers = new Map<string, Driver>();
  readonly #inflight = new Map<string, Set<string>>();
  readonly #work = new Map<string, Set<Promise<unknown>>>();
  readonly #aborts = new Map<string, AbortController>();
  readonly #runLeases: RunLeases;
  readonly #history = new ModelHistory();
  #closed = false;

  /** Normalizes a value to bounded JSON (`jsonLimits`), refusing it with INVALID_INPUT otherwise. */
  json(value: unknown, label?: string): JsonValue {
    return normalizeJson(value, label, this.#options.jsonLimits);
  }

  #keysProblem(value: unknown, label: string): string | null {
    try {
      assertPlainKeys(value, label, this.#options.jsonLimits);
      return null;
    } catch (error) {
      return getErrorMessage(error);
    }
  }

  #jsonProblem(value: unknown, label: string): string | null {
    try {
      this.json(value, label);
      return null;
    } catch (error) {
      return getErrorMessage(error);
    }
  }

  constructor(agents: RegisteredAgent[], options: RuntimeOptions) {
    this.#options = options;
    this.#agents = new Map(agents.map((agent) => [agent.id, agent]));
    this.notifier = options.notifier ?? options.storage.notifier ?? createMemoryNotifier();
    this.files = options.files;
    this.generateId = options.generateId ?? (() => globalThis.crypto.randomUUID());
    this.instanceId = options.instanceId ?? `pai-${globalThis.crypto.randomUUID()}`;
    this.store = new ThreadStore(options.storage, this.notifier, options.clock ?? (() => new Date()));
    this.capabilities = new CapabilityRegistry(options.capabilities ?? {}, (error) =>
      this.reportError({ error, phase: "hook" }),
    );
    this.#runLeases = new RunLeases(
      options.storage,
      this.store.clock,
      this.instanceId,
      options.leaseMs ?? 30_000,
      (runId) => {
        // Another instance adopted the run: stop our tools and never write for it again.
        this.#aborts.get(runId)?.abort(new LeaseLostError(runId));
        this.#aborts.delete(runId);
      },
      (error, threadId, runId) => this.reportError({ error, phase: "run", threadId, runId }),
    );
    this.#validateBindings();
  }

  // ---------------------------------------------------------------- registry

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
    const bindings = this.#options.capabilities ?? {};
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

  // ---------------------------------------------------------------- helpers

  now(): string {
    return this.store.now();
  }

  reportError(report: RuntimeErrorReport): void {
    try {
      this.#options.onRuntimeError?.(report);
    } catch {
      // A failing error reporter must never take the runtime down.
    }
  }

  /** Reports a runtime event to observers; an observer failure never disturbs the run. */
  #emit(event: RuntimeEvent): void {
    for (const observer of this.#options.observers ?? []) {
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

  #track<T>(threadId: string, promise: Promise<T>): Promise<T> {
    let set = this.#work.get(threadId);
    if (!set) {
      set = new Set();
      this.#work.set(threadId, set);
    }
    set.add(promise);
    const done = () => {
      set.delete(promise);
      if (set.size === 0 && this.#work.get(threadId) === set) this.#work.delete(threadId);
    };
    promise.then(done, done);
    return promise;
  }

  /** Resolves when this process has no more work in flight for the thread. */
  async waitForIdle(threadId: string): Promise<void> {
    for (;;) {
      const set = this.#work.get(threadId);
      if (!set || set.size === 0) return;
      await Promise.allSettled([...set]);
    }
  }

  /** Resolves when this process has no more work in flight for any thread. */
  async waitForAll(): Promise<void> {
    while (this.#work.size > 0) {
      await Promise.allSettled([...this.#work.values()].flatMap((set) => [...set]));
    }
  }

  #abortFor(runId: string): AbortController {
    let controller = this.#aborts.get(runId);
    if (!controller) {
      controller = new AbortController();
      this.#aborts.set(runId, controller);
    }
    return controller;
  }

  #requestFor(snapshot: ThreadSnapshot, run: RunRow, identity: unknown, scope: Scope): RequestContext {
    const agent = this.agent(snapshot.thread.agentId).definition;
    return new RequestContext(
      agent,
      identity,
      scope,
      run.clientData ?? null,
      snapshot.thread.threadId,
      this.#abortFor(run.runId).signal,
    );
  }

  #scopeOf(snapshot: ThreadSnapshot): Scope {
    return { scopeKey: snapshot.thread.scopeKey, userKey: snapshot.thread.userKey };
  }

  // ---------------------------------------------------------------- leases

  #holdLease(threadId: string, runId: string): Promise<() => Promise<void>> {
    return this.#runLeases.hold(threadId, runId);
  }

  // ---------------------------------------------------------------- starting runs

  /**
   * Starts a run now, or queues it behind the active run. Called with the message that
   * triggers it (user message or trusted notification).
   */
  async startOrQueueRun(input: {
    threadId: string;
    identity: unknown;
    scope: Scope;
    message: MessageRow | null;
    trigger: RunRow["trigger"];
    clientTools: ClientToolSnapshot[];
    clientData: JsonValue | null;
    queueIfBusy: boolean;
    cancelPending?: boolean;
    /** The thread as the caller just read it (saves a second read). */
    snapshot?: ThreadSnapshot;
  }): Promise<{ runId: string; version: number; queued: boolean }> {
    // Held across the commit so the snapshot it produces stays cached for the driver.
    const release = this.store.hold(input.threadId);
    try {
      return await this.#startOrQueue(input);
    } finally {
      release();
    }
  }

  async #startOrQueue(
    input: Parameters<Engine["startOrQueueRun"]>[0],
  ): Promise<{ runId: string; version: number; queued: boolean }> {
    const runId = this.generateId();
    let queued = false;
    let lease: ReturnType<RunLeases["leaseForCommit"]> | undefined;
    const result = await this.store.transact(
      input.threadId,
      (snapshot, now) => {
        const events: Transition[] = [];
        let state = snapshot;
        const current = activeRun(state);
        queued = false;
        if (current) {
          const pending = pendingActions(state, current.runId);
          if (input.cancelPending && current.status === "waiting") {
            const cancelled = cancelRun(state, {
              runId: current.runId,
              reason: "the user sent a new message",
              now,
            });
            if (!cancelled.ok) return cancelled;
            events.push(cancelled);
            state = applyAll(state, cancelled);
          } else if (input.queueIfBusy) {
            queued = true;
          } else if (pending.length > 0) {
            return {
              ok: false,
              code: "CONFLICT",
              message: `Thread ${input.threadId} has pending actions (${pending.map((action) => `${action.name} [${action.actionId}]`).join(", ")}). Answer them with submit, cancel or fail, or send again with cancelPending: true.`,
            };
          } else {
            return {
              ok: false,
              code: "CONFLICT",
              message: `Thread ${input.threadId} is busy with run ${current.runId}. Wait for it to finish or cancel it first.`,
            };
          }
        }
        if (!queued && snapshot.runs.some((run) => run.status === "queued")) queued = true;
        const run: RunRow = {
          threadId: input.threadId,
          runId,
          status: queued ? "queued" : "running",
          trigger: input.trigger,
          step: 0,
          messageId: null,
          clientTools: input.clientTools,
          clientData: input.clientData,
          identity: toJsonOrNull(input.identity),
          error: null,
          createdAt: now,
          updatedAt: now,
          finishedAt: null,
        };
        const message = input.message
          ? { ...input.message, position: nextMessagePosition(state) }
          : undefined;
        // A queued run's message waits in the run row: the active run's model must not see it yet.
        if (queued && message) run.queuedMessage = message;
        const started = startRun(state, { run, ...(message && !queued ? { message } : {}), now });
        if (!started.ok) return started;
        events.push(started);
        return { ok: true, events: events.flatMap((transition) => (transition.ok ? transition.events : [])) };
      },
      {
        ...(input.snapshot ? { fresh: input.snapshot } : {}),
        // A run that starts now is leased by the commit that creates it: no separate round trip.
        lease: () => {
          lease = queued ? undefined : this.#runLeases.leaseForCommit(runId);
          return lease;
        },
      },
    );
    if (lease) this.#runLeases.taken(lease);
    if (!queued) {
      this.#emit({
        type: "run-start",
        threadId: input.threadId,
        runId,
        agentId: result.snapshot.thread.agentId,
        scopeKey: input.scope.scopeKey,
      });
      this.continueRun(input.threadId, runId, input.identity, input.scope);
    }
    return { runId, version: result.version, queued };
  }

  // ---------------------------------------------------------------- the run loop

  /**
   * Drives a run forward until it waits, finishes or fails. At most one driver per run is
   * active in this process; a call while one is active asks it to look again.
   */
  continueRun(threadId: string, runId: string, identity: unknown, scope: Scope): Promise<void> {
    const existing = this.#drivers.get(runId);
    if (existing) {
      existing.again = true;
      return existing.promise;
    }
    const driver: Driver = { again: true, promise: Promise.resolve() };
    this.#drivers.set(runId, driver);
    driver.promise = this.#track(
      threadId,
      (async () => {
        const release = this.store.hold(threadId);
        let releaseLease: (() => Promise<void>) | undefined;
        try {
          releaseLease = await this.#holdLease(threadId, runId);
          while (driver.again && !this.#closed) {
            driver.again = false;
            await this.#advance(threadId, runId, identity, scope, driver);
          }
        } catch (error) {
          if (error instanceof LeaseLostError) this.reportError({ error, phase: "run", threadId, runId });
          else await this.#failRun(threadId, runId, error);
        } finally {
          this.#drivers.delete(runId);
          await releaseLease?.();
          release();
        }
      })(),
    );
    return driver.promise;
  }

  async #advance(
    threadId: string,
    runId: string,
    identity: unknown,
    scope: Scope,
    driver: Driver,
  ): Promise<void> {
    for (;;) {
      const snapshot = await this.store.snapshot(threadId);
      const { run, pending, unsettled } = analyzeRun(snapshot, runId);
      if (run?.status === "waiting") {
        // Parked by the commit that created its last blocker (see parkIfBlocked).
        this.#parked(snapshot, runId);
        return;
      }
      if (run?.status !== "running") return;
      const agentEntry = this.agent(snapshot.thread.agentId);
      const inflight = this.#inflight.get(runId) ?? new Set<string>();
      const leftovers = unsettled.filter((part) => !inflight.has(part.toolCallId));
      // Every write of the driver is fenced by the run's lease (see RunLeases.assert).
      await this.#runLeases.assert(runId);
      if (leftovers.length > 0) {
        // Calls that started in a process that died: recorded as interrupted, never re-run.
        await this.store.transact(threadId, (state, now) => interruptUnsettled(state, { runId, now }));
        continue;
      }
      if (unsettled.length > 0) return;
      if (pending.length > 0) {
        await this.store.transact(threadId, (state, now) => {
          const analysis = analyzeRun(state, runId);
          if (
            analysis.run?.status !== "running" ||
            analysis.pending.length === 0 ||
            analysis.unsettled.length > 0
          ) {
            return { ok: true, events: [] };
          }
          return setRunStatus(state, { runId, status: "waiting", now });
        });
        this.#parked(snapshot, runId);
        return;
      }
      const maxSteps = agentEntry.definition.maxSteps ?? this.#options.maxSteps ?? 20;
      if (run.step >= maxSteps || this.#lastStepFinished(snapshot, run)) {
        await this.#finishRun(threadId, runId, "completed", null);
        return;
      }
      const request = this.#requestFor(snapshot, run, run.identity ?? identity, scope);
      const stepIds = {
        threadId,
        runId,
        agentId: agentEntry.id,
        scopeKey: snapshot.thread.scopeKey,
        step: run.step + 1,
      };
      this.#emit({ type: "step-start", ...stepIds });
      let finished: ThreadSnapshot | null;
      try {
        ({ finished } = await this.#modelStep(snapshot, run, agentEntry, request));
      } catch (error) {
        this.#emit({ type: "step-end", ...stepIds, error });
        throw error;
      }
      this.#emit({ type: "step-end", ...stepIds });
      if (finished) {
        await this.#afterRunEnded(finished, runId, "completed", null);
        return;
      }
      if (driver.again) driver.again = false;
    }
  }

  /** A parked run holds nothing in this process: no lease to release, no capabilities, no bookkeeping. */
  #parked(snapshot: ThreadSnapshot, runId: string): void {
    this.#runLeases.releaseNotNeeded(runId);
    this.capabilities.threadIdle(snapshot.thread.scopeKey, snapshot.thread.threadId);
    this.#forgetRun(runId);
  }

  /** A step that produced no tool calls ends the run. */
  #lastStepFinished(snapshot: ThreadSnapshot, run: RunRow): boolean {
    if (run.step === 0 || !run.messageId) return false;
    const tail = snapshot.messages.find((message) => message.messageId === run.messageId);
    if (!tail) return false;
    const parts = tail.message.parts as Array<{ type: string }>;
    const lastStart = parts.map((part) => part.type).lastIndexOf("step-start");
    return !parts.slice(lastStart + 1).some((part) => isStoredToolPart(part));
  }

  async #finishRun(threadId: string, runId: string, status: "completed" | "failed", error: string | null) {
    let finished = false;
    const result = await this.store.transact(threadId, (state, now) => {
      const run = state.runs.find((candidate) => candidate.runId === runId);
      finished = false;
      if (!run || !["running", "waiting"].includes(run.status)) return { ok: true, events: [] };
      finished = true;
      return setRunStatus(state, { runId, status, error, now });
    });
    if (finished) await this.#afterRunEnded(result.snapshot, runId, status, error);
    else {
      this.#aborts.delete(runId);
      this.capabilities.threadIdle(result.snapshot.thread.scopeKey, threadId);
      await this.#startQueued(result.snapshot);
    }
  }

  /** What follows a committed run end: observers, capability release, and the next queued run. */
  async #afterRunEnded(
    snapshot: ThreadSnapshot,
    runId: string,
    status: "completed" | "failed",
    error: string | null,
  ): Promise<void> {
    const threadId = snapshot.thread.threadId;
    this.#runLeases.releaseNotNeeded(runId);
    this.#forgetRun(runId);
    this.#emit({
      type: "run-end",
      threadId,
      runId,
      agentId: snapshot.thread.agentId,
      scopeKey: snapshot.thread.scopeKey,
      status,
      ...(error !== null ? { error } : {}),
    });
    this.capabilities.threadIdle(snapshot.thread.scopeKey, threadId);
    await this.#startQueued(snapshot);
  }

  async #failRun(threadId: string, runId: string, error: unknown): Promise<void> {
    if (this.#closed) return;
    this.reportError({ error, phase: "run", threadId, runId });
    const message =
      PaiError.isInstance(error) && error.code !== "INTERNAL" ? error.message : REDACTED_ERROR_MESSAGE;
    try {
      await this.#finishRun(threadId, runId, "failed", message);
    } catch (finishError) {
      this.reportError({ error: finishError, phase: "run", threadId, runId });
    }
  }

  async #startQueued(snapshot: ThreadSnapshot): Promise<void> {
    if (activeRun(snapshot)) return;
    const next = snapshot.runs.find((run) => run.status === "queued");
    if (!next) return;
    const threadId = snapshot.thread.threadId;
    const result = await this.store.transact(threadId, (state, now) => {
      if (activeRun(state)) return { ok: true, events: [] };
      const queued = state.runs.find((run) => run.runId === next.runId);
      if (queued?.status !== "queued") return { ok: true, events: [] };
      // A queued run starts with the newest client-tool snapshot any request gave this thread.
      const latest = [...state.runs]
        .filter((run) => run.status !== "queued")
        .sort((a, b) => a.updatedAt.localeCompare(b.updatedAt))
        .at(-1);
      const message = queued.queuedMessage
        ? { ...queued.queuedMessage, position: nextMessagePosition(state), createdAt: now, updatedAt: now }
        : null;
      let base = state;
      const events: ThreadEvent[] = [];
      if (message) {
        const appended = appendMessage(base, { message });
        if (!appended.ok) return appended;
        events.push(...appended.events);
        base = appended.events.reduce(applyThreadEvent, base);
      }
      const cleared: RunRow = { ...queued, queuedMessage: null };
      base = applyThreadEvent(base, { type: "run-upserted", run: cleared });
      const status = setRunStatus(base, {
        runId: next.runId,
        status: "running",
        now,
        ...(queued.clientTools.length === 0 && latest ? { clientTools: latest.clientTools } : {}),
      });
      if (!status.ok) return status;
      return { ok: true, events: [...events, ...status.events] };
    });
    const started = result.snapshot.runs.find((run) => run.runId === next.runId);
    if (started?.status === "running") {
      this.#emit({
        type: "run-start",
        threadId,
        runId: next.runId,
        agentId: result.snapshot.thread.agentId,
        scopeKey: result.snapshot.thread.scopeKey,
      });
      void this.continueRun(threadId, next.runId, started.identity ?? null, this.#scopeOf(result.snapshot));
    }
  }

  // ---------------------------------------------------------------- model step

  async #prepareTools(
    run: RunRow,
    agent: RuntimeAgentDefinition,
    request: RequestContext,
  ): Promise<{ modelTools: ToolSet; historyTools: ToolSet }> {
    const args = await request.resolverArgs();
    const modelTools: ToolSet = {};
    const historyTools: ToolSet = {};
    for (const [name, registration] of Object.entries(agent.tools)) {
      const config = registration.tool.config;
      historyTools[name] = {
        inputSchema: config.inputSchema,
        ...(config.toModelOutput ? { toModelOutput: config.toModelOutput as never } : {}),
      } as ToolSet[string];
      if (!(await resolveEnabled(registration, args))) continue;
      modelTools[name] = {
        description: await resolveDescription(registration, args),
        inputSchema: await cachedSdkSchema(config.inputSchema),
      } as ToolSet[string];
    }
    for (const clientTool of run.clientTools) {
      if (modelTools[clientTool.name] || agent.tools[clientTool.name]) continue;
      modelTools[clientTool.name] = {
        description: clientTool.description,
        inputSchema: jsonSchema(clientTool.inputSchema as never),
      } as ToolSet[string];
    }
    return { modelTools, historyTools };
  }

  async #modelStep(
    snapshot: ThreadSnapshot,
    run: RunRow,
    agentEntry: RegisteredAgent,
    request: RequestContext,
  ): Promise<{ finished: ThreadSnapshot | null }> {
    const agent = agentEntry.definition;
    const threadId = snapshot.thread.threadId;
    const model: LanguageModel | undefined = agent.model ?? this.#options.model;
    if (!model) {
      throw new PaiError(
        "INVALID_DEFINITION",
        `Agent "${agentEntry.id}" has no model. Set defineAgent({ model }) or createAgentRuntime({ model }).`,
      );
    }
    const { modelTools, historyTools } = await this.#prepareTools(run, agent, request);
    const args = await request.resolverArgs();
    const instructions =
      typeof agent.instructions === "function" ? await agent.instructions(args) : agent.instructions;
    let messages: ModelMessage[];
    try {
      messages = await this.#history.convert(
        agent,
        snapshot.messages.map((row) => row.message as UIMessage),
        historyTools,
      );
    } catch (error) {
      throw new PaiError(
        "INTERNAL",
        `Preparing the model history failed (a toModelOutput converter threw?): ${getErrorMessage(error)}`,
        { cause: error },
      );
    }
    const messageId = run.messageId ?? this.generateId();
    void this.notifier
      .publish({
        type: "live",
        threadId,
        event: { type: "step-started", threadId, runId: run.runId, step: run.step + 1 },
      })
      .catch(() => undefined);

    const runIds = {
      threadId,
      runId: run.runId,
      agentId: agentEntry.id,
      scopeKey: snapshot.thread.scopeKey,
    };
    this.#emit({
      type: "model-start",
      ...runIds,
      step: run.step + 1,
      provider: typeof model === "string" ? "gateway" : model.provider,
      modelId: typeof model === "string" ? model : model.modelId,
    });
    // One model call per step: PAI owns the loop, so it uses the SDK's single-call streaming
    // primitive rather than streamText's multi-step machinery (about 3x cheaper per step).
    const result = await streamLanguageModelCall({
      model,
      ...(instructions ? { instructions } : {}),
      messages,
      tools: modelTools,
      abortSignal: request.signal,
    });

    type Block = { kind: "text" | "reasoning"; id: string; text: string };
    const order: Array<Block | { kind: "tool"; toolCallId: string }> = [];
    const blocks = new Map<string, Block>();
    const calls = new Map<
      string,
      { toolCallId: string; toolName: string; input: unknown; errorText?: string; dynamic: boolean }
    >();
    let streamError: unknown;
    for await (const part of result.stream) {
      switch (part.type) {
        case "text-delta":
        case "reasoning-delta": {
          const kind = part.type === "text-delta" ? "text" : "reasoning";
          const key = `${kind}:${part.id}`;
          let block = blocks.get(key);
          if (!block) {
            block = { kind, id: part.id, text: "" };
            blocks.set(key, block);
            order.push(block);
          }
          block.text += part.text;
          void this.notifier
            .publish({
              type: "live",
              threadId,
              event: {
                type: kind === "text" ? "text-delta" : "reasoning-delta",
                threadId,
                runId: run.runId,
                messageId,
                delta: part.text,
              },
            })
            .catch(() => undefined);
          break;
        }
        case "tool-call": {
          const known = Boolean(agent.tools[part.toolName]);
          const entry = {
            toolCallId: part.toolCallId,
            toolName: part.toolName,
            input: part.input,
            dynamic: !known,
            ...((part as { invalid?: boolean }).invalid
              ? { errorText: getErrorMessage((part as { error?: unknown }).error) }
              : {}),
          };
          if (!calls.has(part.toolCallId)) order.push({ kind: "tool", toolCallId: part.toolCallId });
          calls.set(part.toolCallId, entry);
          break;
        }
        case "tool-error": {
          const existing = calls.get(part.toolCallId);
          if (!existing) order.push({ kind: "tool", toolCallId: part.toolCallId });
          calls.set(part.toolCallId, {
            toolCallId: part.toolCallId,
            toolName: part.toolName,
            input: part.input,
            dynamic: !agent.tools[part.toolName],
            errorText: getErrorMessage(part.error),
          });
          break;
        }
        case "error":
          streamError = part.error;
          break;
        default:
          break;
      }
    }
    this.#emit({
      type: "model-end",
      ...runIds,
      step: run.step + 1,
      toolCalls: calls.size,
      ...(streamError !== undefined ? { error: streamError } : {}),
    });
    if (streamError !== undefined) {
      throw new PaiError("INTERNAL", `The model call failed: ${getErrorMessage(streamError)}`, {
        cause: streamError,
      });
    }

    const parts: unknown[] = [{ type: "step-start" }];
    const outputActions: ActionRow[] = [];
    const toExecute: Array<{ toolCallId: string; toolName: string; input: unknown }> = [];
    const settled: Array<{ toolCallId: string; outcome: ToolOutcome }> = [];
    const now = this.now();
    for (const item of order) {
      if (item.kind !== "tool") {
        parts.push({ type: item.kind, text: item.text, state: "done" });
        continue;
      }
      const call = calls.get(item.toolCallId)!;
      const input = safeJson(call.input);
      const base = call.dynamic
        ? { type: "dynamic-tool", toolName: call.toolName, toolCallId: call.toolCallId }
        : { type: `tool-${call.toolName}`, toolCallId: call.toolCallId };
      parts.push({ ...base, state: "input-available", input });
      if (call.errorText !== undefined) {
        settled.push({ toolCallId: call.toolCallId, outcome: { type: "error", errorText: call.errorText } });
        continue;
      }
      const registration = agent.tools[call.toolName];
      if (registration?.tool.execute) {
        toExecute.push({ toolCallId: call.toolCallId, toolName: call.toolName, input });
        continue;
      }
      const clientTool = run.clientTools.find((tool) => tool.name === call.toolName);
      if (!registration && !clientTool) {
        settled.push({
          toolCallId: call.toolCallId,
          outcome: { type: "error", errorText: `Tool ${call.toolName} is not available.` },
        });
        continue;
      }
      outputActions.push({
        threadId,
        actionId: call.toolCallId,
        scopeKey: snapshot.thread.scopeKey,
        runId: run.runId,
        messageId,
        toolCallId: call.toolCallId,
        toolName: call.toolName,
        kind: "output",
        suspendName: null,
        name: `${call.toolName}.output`,
        input: (input ?? null) as JsonValue | null,
        state: "pending",
        episode: 1,
        createdAt: now,
        resolvedAt: null,
        resume: null,
        reason: null,
        idempotencyKey: null,
      });
    }

    const inflight = this.#inflightFor(run.runId);
    for (const call of toExecute) inflight.add(call.toolCallId);
    const finalStep = !parts.some((part) => isStoredToolPart(part as { type: string }));
    let committed: { snapshot: ThreadSnapshot } | undefined;
    try {
      await this.#runLeases.assert(run.runId);
      // A step without tool calls is the run's last: it is committed together with the run's
      // completion, saving a storage round trip per run.
      committed = await this.store.transact(threadId, (state, at) => {
        const step = commitStep(state, {
          runId: run.runId,
          messageId,
          parts,
          outputActions,
          settled,
          now: at,
          expectedStep: run.step,
        });
        if (!step.ok) return step;
        // A step whose calls all wait for a client parks the run in the same commit.
        if (!finalStep) return parkIfBlocked(state, step, { runId: run.runId, now: at });
        const done = setRunStatus(step.events.reduce(applyThreadEvent, state), {
          runId: run.runId,
          status: "completed",
          now: at,
        });
        if (!done.ok) return done;
        return { ok: true, events: [...step.events, ...done.events] };
      });
    } catch (error) {
      for (const call of toExecute) inflight.delete(call.toolCallId);
      throw error;
    }
    for (const action of outputActions) {
      this.#emit({
        type: "suspend",
        ...runIds,
        toolName: action.toolName,
        toolCallId: action.toolCallId,
        actionId: action.actionId,
        actionName: action.name,
        actionKind: "output",
      });
    }
    await Promise.all(
      toExecute.map((call) =>
        this.#runToolCall({
          threadId,
          runId: run.runId,
          toolCallId: call.toolCallId,
          toolName: call.toolName,
          input: call.input,
          entry: { type: "initial" },
          request,
          agentEntry,
        }),
      ),
    );
    const finished = finalStep
      ? committed?.snapshot.runs.find((candidate) => candidate.runId === run.runId)
      : undefined;
    return { finished: finished?.status === "completed" && committed ? committed.snapshot : null };
  }

  /**
   * Drops per-run bookkeeping once a run parks or ends, so a waiting run costs this process
   * nothing (a resumed run gets fresh bookkeeping). Kept while calls are still in flight.
   */
  #forgetRun(runId: string): void {
    const inflight = this.#inflight.get(runId);
    if (inflight && inflight.size > 0) return;
    this.#inflight.delete(runId);
    this.#aborts.delete(runId);
  }

  #inflightFor(runId: string): Set<string> {
    let set = this.#inflight.get(runId);
    if (!set) {
      set = new Set();
      this.#inflight.set(runId, set);
    }
    return set;
  }

  // ---------------------------------------------------------------- tool execution

  /**
   * Executes one tool call (initial or resumed) and commits its outcome or suspension.
   * Never throws for tool failures; hook failures (onOutput, afterToolResult) fail the run.
   */
  async #runToolCall(input: {
    threadId: string;
    runId: string;
    toolCallId: string;
    toolName: string;
    input: unknown;
    entry: CallEntry;
    request: RequestContext;
    agentEntry: RegisteredAgent;
  }): Promise<void> {
    const { threadId, runId, toolCallId, toolName, request, agentEntry } = input;
    const agent = agentEntry.definition;
    const registration = agent.tools[toolName]!;
    const tool = registration.tool;
    const inflight = this.#inflightFor(runId);
    inflight.add(toolCallId);
    let fatal: FatalHookError | undefined;
    const callIds = {
      threadId,
      runId,
      agentId: agentEntry.id,
      scopeKey: request.scope.scopeKey,
      toolName,
      toolCallId,
    };
    let ended: { outcome: "output" | "error" | "suspended"; errorText?: string } = {
      outcome: "error",
      errorText: "The call did not complete.",
    };
    this.#emit({ type: "tool-start", ...callIds, entry: input.entry.type });
    try {
      let outcome: ToolOutcome;
      let suspension: { name: string; input: JsonValue } | undefined;
      const args = await request.resolverArgs();
      const parsedInput = await validateSchema(tool.config.inputSchema, input.input);
      const unbounded = this.#jsonProblem(input.input, `Input of tool ${toolName}`);
      if (!(await resolveEnabled(registration, args))) {
        outcome = { type: "error", errorText: `Tool ${toolName} is currently unavailable.` };
      } else if (unbounded) {
        outcome = { type: "error", errorText: unbounded };
      } else if (!parsedInput.success) {
        outcome = { type: "error", errorText: `Invalid input for tool ${toolName}: ${parsedInput.message}` };
      } else {
        const executed = await this.#execute({
          ...input,
          registration,
          parsedInput: parsedInput.value,
          onFatal: (error) => {
            fatal = error;
          },
        });
        if (executed.type === "suspend") {
          suspension = { name: executed.name, input: executed.input };
          outcome = { type: "output", output: null };
        } else {
          outcome = executed.outcome;
        }
      }
      if (fatal) throw fatal;
      if (suspension) {
        const snapshot = await this.store.snapshot(threadId);
        const episode =
          snapshot.actions.filter((action) => action.toolCallId === toolCallId && action.kind === "suspend")
            .length + 1;
        const run = snapshot.runs.find((candidate) => candidate.runId === runId);
        const now = this.now();
        const action: ActionRow = {
          threadId,
          actionId: this.generateId(),
          scopeKey: snapshot.thread.scopeKey,
          runId,
          messageId: run?.messageId ?? "",
          toolCallId,
          toolName,
          kind: "suspend",
          suspendName: suspension.name,
          name: `${toolName}.${suspension.name}`,
          input: suspension.input,
          state: "pending",
          episode,
          createdAt: now,
          resolvedAt: null,
          resume: null,
          reason: null,
          idempotencyKey: null,
        };
        await this.#commitIgnoringStale(
          threadId,
          (state, at) =>
            parkIfBlocked(state, suspendToolCall(state, { action, now: at }), { runId, now: at }),
          runId,
        );
        ended = { outcome: "suspended" };
        this.#emit({
          type: "suspend",
          ...callIds,
          actionId: action.actionId,
          actionName: action.name,
          actionKind: "suspend",
        });
        return;
      }
      const parsedValue = parsedInput.success ? parsedInput.value : input.input;
      let result = await this.#afterToolResult(agent, toolName, toolCallId, parsedValue, outcome, request);
      if (result.type === "output" && registration.onOutput) {
        try {
          await registration.onOutput({
            ...args,
            input: parsedValue,
            output: result.output,
            tool: { name: toolName },
            call: { toolCallId },
          });
        } catch (error) {
          throw new FatalHookError("onOutput", error);
        }
      }
      if (result.type === "output" && result.output !== undefined) {
        try {
          result = { type: "output", output: this.json(result.output, `Output of tool ${toolName}`) };
        } catch (error) {
          result = { type: "error", errorText: getErrorMessage(error) };
        }
      }
      const final: ToolOutcome =
        result.type === "output"
          ? { type: "output", output: result.output as JsonValue | undefined }
          : result;
      await this.#commitIgnoringStale(
        threadId,
        (state, now) =>
          parkIfBlocked(state, settleToolCall(state, { runId, toolCallId, outcome: final, now }), {
            runId,
            now,
          }),
        runId,
      );
      ended =
        final.type === "output" ? { outcome: "output" } : { outcome: "error", errorText: final.errorText };
    } finally {
      inflight.delete(toolCallId);
      this.#emit({ type: "tool-end", ...callIds, ...ended });
    }
  }

  async #afterToolResult(
    agent: RuntimeAgentDefinition,
    toolName: string,
    toolCallId: string,
    input: unknown,
    outcome: ToolOutcome,
    request: RequestContext,
  ): Promise<{ type: "output"; output: unknown } | { type: "error"; errorText: string }> {
    try {
      return await applyAfterToolResult(agent, {
        name: toolName,
        toolCallId,
        input,
        result: outcome,
        request,
      });
    } catch (error) {
      throw new FatalHookError("afterToolResult", error);
    }
  }

  /** Commits a transition; a stale tool outcome (the run was cancelled meanwhile) is dropped. */
  async #commitIgnoringStale(
    threadId: string,
    decide: (snapshot: ThreadSnapshot, now: string) => Transition,
    runId?: string,
  ): Promise<boolean> {
    if (runId) await this.#runLeases.assert(runId);
    try {
      await this.store.transact(threadId, decide);
      return true;
    } catch (error) {
      if (PaiError.isInstance(error) && error.code === "CONFLICT") return false;
      throw error;
    }
  }

  async #execute(input: {
    threadId: string;
    runId: string;
    toolCallId: string;
    toolName: string;
    entry: CallEntry;
    request: RequestContext;
    agentEntry: RegisteredAgent;
    registration: RuntimeToolRegistration;
    parsedInput: unknown;
    onFatal: (error: FatalHookError) => void;
  }): Promise<
    { type: "outcome"; outcome: ToolOutcome } | { type: "suspend"; name: string; input: JsonValue }
  > {
    const { registration, request, toolName, toolCallId, threadId, runId } = input;
    const tool = registration.tool;
    const agent = input.agentEntry.definition;
    const args = await request.resolverArgs();
    const signal = request.signal;
    const acquired: Array<() => Promise<void>> = [];
    try {
      const context = await resolveToolContext(registration, args);
      const facades: Record<string, unknown> = {};
      for (const [alias, capability] of Object.entries(tool.capabilities ?? {})) {
        const { facade, done } = await this.capabilities.acquire(capability, {
          scopeKey: request.scope.scopeKey,
          threadId,
          signal,
        });
        facades[alias] = facade;
        acquired.push(done);
      }
      const snapshot = await this.store.snapshot(threadId);
      const suspendHistory = snapshot.actions
        .filter((action) => action.toolCallId === toolCallId && action.kind === "suspend")
        .sort((a, b) => a.episode - b.episode)
        .map(toSuspendHistoryItem);
      const thread = { threadId, runId, toolCallId, toolName };
      const baseCtx = {
        agentId: input.agentEntry.id,
        agents: this.#agentRunner(request, threadId),
        thread,
        files: this.#scopedFiles(request.scope, threadId, signal),
        trigger: (triggerInput: { notification?: string; data?: unknown; hidden?: boolean }) =>
          this.trigger({ threadId, scope: request.scope, identity: request.identity, ...triggerInput }),
      };
      const tools = await buildChildTools(tool, {
        request,
        parentContext: context,
        agent,
        capabilities: this.capabilities,
        generateId: this.generateId,
        baseCtx,
        signal,
        onHookFailure: input.onFatal,
      });
      const entry =
        input.entry.type === "initial"
          ? { type: "initial" as const }
          : {
              type: "resume" as const,
              name: input.entry.action.suspendName!,
              resume: input.entry.resume,
              action: actionRef(input.entry.action),
            };
      const ctx = {
        ...baseCtx,
        input: input.parsedInput,
        context,
        capabilities: Object.freeze(facades),
        tools,
        signal,
        entry,
        suspendHistory,
        data: this.#dataWriter(registration, threadId, toolCallId, request),
        suspend: (name: string, suspendInput: unknown) => suspendMarker(name, suspendInput),
        fail: (message: string) => failMarker(message),
      };
      let raw: unknown;
      try {
        raw = await tool.execute!(ctx);
      } catch (error) {
        if (error instanceof FatalHookError) throw error;
        if (signal.aborted) {
          return { type: "outcome", outcome: { type: "error", errorText: cancellationText(null) } };
        }
        const mapped = agent.mapError?.({ error, toolName, toolCallId });
        if (!PaiError.isInstance(error))
          this.reportError({ error, phase: "tool", threadId, runId, toolName, toolCallId });
        return { type: "outcome", outcome: { type: "error", errorText: mapped ?? getErrorMessage(error) } };
      }
      if (isFailMarker(raw)) {
        return {
          type: "outcome",
          outcome: { type: "error", errorText: toolFailureDetails(raw.message).message },
        };
      }
      if (isSuspendMarker(raw)) {
        const point = tool.config.suspend?.[raw.name];
        if (!point) {
          return {
            type: "outcome",
            outcome: {
              type: "error",
              errorText: `Tool ${toolName} tried to suspend at "${raw.name}", which it does not declare.`,
            },
          };
        }
        const unsafe = this.#keysProblem(raw.input, "Suspend data");
        if (unsafe) return { type: "outcome", outcome: { type: "error", errorText: unsafe } };
        const parsed = await validateSchema(point.suspendSchema, raw.input);
        if (!parsed.success) {
          return {
            type: "outcome",
            outcome: {
              type: "error",
              errorText: `Tool ${toolName} suspended at "${raw.name}" with data that does not match its suspendSchema (${parsed.message}).`,
            },
          };
        }
        try {
          return {
            type: "suspend",
            name: raw.name,
            input: this.json(parsed.value ?? null, "Suspend data"),
          };
        } catch (error) {
          return { type: "outcome", outcome: { type: "error", errorText: getErrorMessage(error) } };
        }
      }
      const settled = await settleOutput(tool, toolName, raw);
      return {
        type: "outcome",
        outcome: settled.ok
          ? { type: "output", output: settled.output }
          : { type: "error", errorText: settled.errorText },
      };
    } catch (error) {
      if (error instanceof FatalHookError) throw error;
      if (signal.aborted)
        return { type: "outcome", outcome: { type: "error", errorText: cancellationText(null) } };
      this.reportError({ error, phase: "tool", threadId, runId, toolName, toolCallId });
      const mapped = agent.mapError?.({ error, toolName, toolCallId });
      return { type: "outcome", outcome: { type: "error", errorText: mapped ?? getErrorMessage(error) } };
    } finally {
      for (const done of acquired) {
        await done().catch((error) => this.reportError({ error, phase: "hook", threadId, runId }));
      }
    }
  }

  #dataWriter(
    registration: RuntimeToolRegistration,
    threadId: string,
    toolCallId: string,
    request: RequestContext,
  ) {
    const schemas = registration.tool.config.dataSchemas ?? {};
    return {
      write: async (channel: string, value: unknown, options: { id?: string; transient?: boolean } = {}) => {
        const schema = schemas[channel];
        if (!schema) {
          throw new PaiError(
            "INVALID_INPUT",
            `Tool data channel "${channel}" is not declared. Declared channels: ${Object.keys(schemas).join(", ") || "none"}.`,
          );
        }
        assertPlainKeys(value, `Tool data "${channel}"`, this.#options.jsonLimits);
        const parsed = await validateSchema(schema, value);
        if (!parsed.success) {
          throw new PaiError("INVALID_INPUT", `Tool data for "${channel}" is invalid: ${parsed.message}`, {
            issues: parsed.issues,
          });
        }
        const args = await request.resolverArgs();
        if (!(await resolveEnabled(registration, args))) {
          throw new PaiError("TOOL_DISABLED", "This tool was disabled; it can no longer write tool data.");
        }
        const item: ToolDataRow = {
          threadId,
          toolCallId,
          channel,
          itemId: options.id ?? this.generateId(),
          value: this.json(parsed.value, `Tool data "${channel}"`),
          updatedAt: this.now(),
        };
        if (options.transient) {
          await this.notifier.publish({
            type: "live",
            threadId,
            event: { type: "tool-data-transient", item },
          });
          return;
        }
        await this.store.transact(threadId, (state) => writeToolData(state, { item }));
      },
      list: async (channel: string) => {
        const snapshot = await this.store.snapshot(threadId);
        return snapshot.toolData
          .filter((item) => item.toolCallId === toolCallId && item.channel === channel)
          .map((item) => ({ id: item.itemId, value: item.value, updatedAt: item.updatedAt }));
      },
    };
  }

  #scopedFiles(scope: Scope, threadId: string, signal: AbortSignal) {
    const files = this.files;
    const missing = () =>
      new PaiError(
        "INVALID_DEFINITION",
        "No files provider is configured. Pass createAgentRuntime({ files }).",
      );
    return {
      save: async (input: Pick<SaveFileInput, "body" | "mediaType" | "filename" | "metadata">) => {
        if (!files) throw missing();
        return files.save({
          body: input.body,
          mediaType: input.mediaType,
          filename: input.filename,
          ...(input.metadata ? { metadata: input.metadata } : {}),
          scopeKey: scope.scopeKey,
          userKey: scope.userKey ?? null,
          threadId,
          signal,
        });
      },
      read: async (input: { fileId: string }) => {
        if (!files) throw missing();
        return files.read({ scopeKey: scope.scopeKey, fileId: input.fileId, signal });
      },
    };
  }

  #agentRunner(request: RequestContext, parentThreadId: string) {
    return {
      /**
       * Runs another registered agent on a fresh thread of the same scope and waits for it.
       * Cancelling the parent run cancels the child run.
       */
      run: async (input: { agentId: string; prompt: string; threadId?: string; signal?: AbortSignal }) => {
        if (!input || typeof input.agentId !== "string" || typeof input.prompt !== "string") {
          throw new PaiError("INVALID_INPUT", "ctx.agents.run needs { agentId, prompt }.");
        }
        const agentId = input.agentId;
        this.agent(agentId);
        let threadId = input.threadId;
        if (threadId) {
          const existing = await this.store.load(threadId);
          if (
            !existing ||
            existing.thread.scopeKey !== request.scope.scopeKey ||
            existing.thread.agentId !== agentId
          ) {
            throw new PaiError("NOT_FOUND", `Thread ${threadId} of agent "${agentId}" was not found.`);
          }
        } else {
          threadId = this.generateId();
          await this.createThread({
            threadId,
            scope: request.scope,
            agentId,
            title: null,
            metadata: { parentThreadId },
          });
        }
        const childThreadId = threadId;
        const sent = await this.startOrQueueRun({
          threadId: childThreadId,
          identity: request.identity,
          scope: request.scope,
          message: this.userMessage(childThreadId, { text: input.prompt }),
          trigger: { type: "message", messageId: "" },
          clientTools: [],
          clientData: null,
          queueIfBusy: false,
        });
        const signals = input.signal ? [request.signal, input.signal] : [request.signal];
        const onAbort = () =>
          void this.cancelRunOf(childThreadId, "the calling run was cancelled").catch(() => undefined);
        for (const signal of signals) signal.addEventListener("abort", onAbort, { once: true });
        try {
          await this.waitForIdle(childThreadId);
        } finally {
          for (const signal of signals) signal.removeEventListener("abort", onAbort);
        }
        const snapshot = await this.store.require(childThreadId);
        const run = snapshot.runs.find((candidate) => candidate.runId === sent.runId);
        const last = [...snapshot.messages].reverse().find((message) => message.role === "assistant");
        const text = (last?.message.parts ?? [])
          .filter(
            (part): part is { type: "text"; text: string } => (part as { type: string }).type === "text",
          )
          .map((part) => part.text)
          .join("");
        return { threadId: childThreadId, runId: sent.runId, status: run?.status ?? "failed", text };
      },
    };
  }

  // ---------------------------------------------------------------- threads

  async createThread(input: {
    threadId: string;
    scope: Scope;
    agentId: string;
    title: string | null;
    metadata: JsonObject | null;
  }) {
    this.agent(input.agentId);
    const result = await this.store.transact(
      input.threadId,
      (_snapshot, now) => ({
        ok: true,
        events: [
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
      }),
      { create: true },
    );
    return result.snapshot.thread;
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

  /** Validates a request's frontend-defined client tools (spec 03). */
  validateClientTools(agentId: string, tools: ClientToolSnapshot[] | undefined): ClientToolSnapshot[] {
    return validateClientToolSnapshot(tools, {
      backendTools: this.agent(agentId).definition.tools,
      maxBytes: this.#options.maxClientToolsBytes ?? 64 * 1024,
    });
  }

  /** Cancels the thread's active run (if any); pending work becomes model-visible cancellations. */
  async cancelRunOf(threadId: string, reason: string | null): Promise<{ version: number }> {
    let cancelledRunId: string | undefined;
    const result = await this.store.transact(threadId, (snapshot, now) => {
      const run = activeRun(snapshot);
      cancelledRunId = run?.runId;
      if (!run) return { ok: true, events: [] };
      return cancelRun(snapshot, { runId: run.runId, reason, now });
    });
    if (cancelledRunId) {
      this.#emit({
        type: "run-end",
        threadId,
        runId: cancelledRunId,
        agentId: result.snapshot.thread.agentId,
        scopeKey: result.snapshot.thread.scopeKey,
        status: "cancelled",
      });
      this.#aborts.get(cancelledRunId)?.abort(new PaiError("CONFLICT", "The run was cancelled."));
      this.#aborts.delete(cancelledRunId);
      this.capabilities.threadIdle(result.snapshot.thread.scopeKey, threadId);
      await this.#startQueued(result.snapshot);
    }
    return { version: result.version };
  }

  /** Appends a trusted notification and continues generation (queued while a run is active). */
  async trigger(input: {
    threadId: string;
    scope: Scope;
    identity: unknown;
    notification?: string;
    data?: unknown;
    hidden?: boolean;
    clientTools?: ClientToolSnapshot[];
  }): Promise<{ runId: string; queued: boolean }> {
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

  // ---------------------------------------------------------------- actions

  /**
   * Resolves a pending action with submit, cancel or fail. Invalid payloads and disabled
   * tools are rejected before anything is written; a resolved action yields CONFLICT unless
   * the same idempotency key resolved it.
   */
  async resolve(input: {
    threadId: string;
    actionId: string;
    identity: unknown;
    scope: Scope;
    kind: "submit" | "cancel" | "fail";
    payload?: unknown;
    reason?: string | null;
    error?: string | { message: string };
    idempotencyKey?: string | null;
    clientTools?: ClientToolSnapshot[];
    clientData?: JsonValue | null;
    /** The thread as the caller just read it (saves a second read). */
    snapshot?: ThreadSnapshot;
  }): Promise<{ action: ActionRow; version: number }> {
    const snapshot = input.snapshot ?? (await this.store.require(input.threadId));
    const action = snapshot.actions.find((candidate) => candidate.actionId === input.actionId);
    if (!action) throw new PaiError("NOT_FOUND", `No action ${input.actionId} in thread ${input.threadId}.`);
    if (action.state !== "pending") {
      if (
        input.idempotencyKey &&
        action.idempotencyKey === input.idempotencyKey &&
        matchesKind(action, input.kind)
      ) {
        return { action, version: action.resolvedVersion ?? snapshot.thread.version };
      }
      throw new PaiError(
        "CONFLICT",
        `Action ${action.name} (${action.actionId}) was already ${action.state}; it can be resolved only once.`,
      );
    }
    const agentEntry = this.agent(snapshot.thread.agentId);
    const registration = agentEntry.definition.tools[action.toolName];
    const run = snapshot.runs.find((candidate) => candidate.runId === action.runId)!;
    const request = new RequestContext(
      agentEntry.definition,
      input.identity,
      input.scope,
      input.clientData ?? run.clientData ?? null,
      input.threadId,
      this.#abortFor(run.runId).signal,
    );
    const tail = snapshot.messages.find((message) => message.messageId === action.messageId);
    const part = tail ? findToolPart(tail.message, action.toolCallId)?.part : undefined;
    if (
      !registration &&
      !run.clientTools.some((tool) => tool.name === action.toolName) &&
      input.kind === "submit"
    ) {
      throw new PaiError(
        "MIGRATION_REQUIRED",
        `Tool "${action.toolName}" is no longer registered, so its unfinished call cannot be completed. Cancel or fail the action, or migrate the stored call.`,
      );
    }
    let payload: JsonValue | null = null;
    let outcome: ToolOutcome | undefined;
    /** The submitted payload as its schema parsed it (for a suspension: the resume value). */
    let parsedSubmit: unknown = input.payload;
    if (input.kind === "submit") {
      if (registration && !(await resolveEnabled(registration, await request.resolverArgs()))) {
        throw new PaiError(
          "TOOL_DISABLED",
          `Tool "${action.toolName}" is disabled, so ${action.name} cannot be submitted. Cancel or fail the action instead.`,
        );
      }
      const schema = this.#submitSchema(action, registration, run);
      let parsedValue: unknown = input.payload;
      if (schema) {
        const parsed = await validateSchema(schema, input.payload);
        if (!parsed.success) {
          throw new PaiError(
            "INVALID_INPUT",
            `The payload for ${action.name} is invalid: ${parsed.message}. The action is still waiting; submit a corrected payload.`,
            { issues: parsed.issues },
          );
        }
        parsedValue = parsed.value;
      }
      parsedSubmit = parsedValue;
      payload = input.payload === undefined ? null : this.json(input.payload, `Payload for ${action.name}`);
      if (action.kind === "output") {
        let output: unknown = parsedValue;
        if (registration) {
          const settled = await settleOutput(registration.tool, action.toolName, parsedValue);
          if (!settled.ok) throw new PaiError("INVALID_INPUT", settled.errorText);
          output = settled.output;
        }
        const after = await this.#afterToolResult(
          agentEntry.definition,
          action.toolName,
          action.toolCallId,
          part?.input,
          { type: "output", output: output as JsonValue },
          request,
        );
        if (after.type === "output" && registration?.onOutput) {
          const observerArgs = await request.resolverArgs();
          await this.#observeOutput(input.threadId, run.runId, () =>
            registration.onOutput!({
              ...observerArgs,
              input: part?.input,
              output: after.output,
              tool: { name: action.toolName },
              call: { toolCallId: action.toolCallId },
            }),
          );
        }
        outcome =
          after.type === "output"
            ? { type: "output", output: after.output === undefined ? undefined : this.json(after.output) }
            : after;
      }
    }
    const errorMessage =
      input.kind === "fail"
        ? toolFailureDetails(typeof input.error === "string" ? input.error : (input.error?.message ?? ""))
            .message
        : "";
    let failOutcome: ToolOutcome | undefined;
    if (input.kind === "fail") {
      // afterToolResult sees every result, failures included, and may turn this one into an output.
      const after = await this.#afterToolResult(
        agentEntry.definition,
        action.toolName,
        action.toolCallId,
        part?.input,
        { type: "error", errorText: errorMessage },
        request,
      );
      if (after.type === "output") {
        if (registration?.onOutput) {
          const observerArgs = await request.resolverArgs();
          await this.#observeOutput(input.threadId, run.runId, () =>
            registration.onOutput!({
              ...observerArgs,
              input: part?.input,
              output: after.output,
              tool: { name: action.toolName },
              call: { toolCallId: action.toolCallId },
            }),
          );
        }
        failOutcome = {
          type: "output",
          output: after.output === undefined ? undefined : this.json(after.output),
        };
      } else if (after.errorText !== errorMessage) {
        failOutcome = after;
      }
    }
    const resolution =
      input.kind === "submit"
        ? { type: "submit" as const, payload, ...(outcome ? { outcome } : {}) }
        : input.kind === "cancel"
          ? {
              type: "cancel" as const,
              reason: input.reason ?? null,
              errorText: cancellationText(input.reason),
            }
          : {
              type: "fail" as const,
              message: errorMessage,
              errorText: errorMessage,
              ...(failOutcome ? { outcome: failOutcome } : {}),
            };
    const reenters = input.kind === "submit" && action.kind === "suspend" && Boolean(registration);
    // Claimed before the commit so a concurrent driver never mistakes the call for a crash leftover.
    if (reenters) this.#inflightFor(run.runId).add(action.toolCallId);
    // Held across the commit so the snapshot it produces stays cached for the work that follows.
    const held = this.store.hold(input.threadId);
    try {
      const clientTools = input.clientTools;
      let wakes = false;
      let lease: ReturnType<RunLeases["leaseForCommit"]> | undefined;
      const result = await this.store
        .transact(
          input.threadId,
          (state, now) => {
            const resolved = resolveAction(state, {
              actionId: input.actionId,
              resolution,
              idempotencyKey: input.idempotencyKey ?? null,
              now,
            });
            // Waking a parked run: nobody drives it, so this commit takes its lease for this process.
            wakes =
              resolved.ok &&
              resolved.events.some(
                (event) =>
                  event.type === "run-upserted" &&
                  event.run.runId === run.runId &&
                  event.run.status === "running",
              );
            if (!resolved.ok || !clientTools) return resolved;
            const current = state.runs.find((candidate) => candidate.runId === action.runId);
            if (!current) return resolved;
            return {
              ok: true,
              events: [
                ...resolved.events.map((event) =>
                  event.type === "run-upserted" && event.run.runId === current.runId
                    ? { ...event, run: { ...event.run, clientTools, identity: toJsonOrNull(input.identity) } }
                    : event,
                ),
              ],
            };
          },
          {
            fresh: snapshot,
            lease: () => {
              lease = wakes ? this.#runLeases.leaseForCommit(run.runId) : undefined;
              return lease;
            },
          },
        )
        .catch((error: unknown) => {
          if (reenters) this.#inflightFor(run.runId).delete(action.toolCallId);
          throw error;
        });
      if (lease) this.#runLeases.taken(lease);
      const resolved = result.snapshot.actions.find((candidate) => candidate.actionId === input.actionId)!;
      this.#emit({
        type: "action-resolved",
        threadId: input.threadId,
        runId: run.runId,
        agentId: agentEntry.id,
        scopeKey: input.scope.scopeKey,
        toolName: action.toolName,
        toolCallId: action.toolCallId,
        actionId: action.actionId,
        actionName: action.name,
        actionKind: action.kind,
        resolution: input.kind,
      });
      if (reenters && registration) {
        // Parsed above by the suspension's resumeSchema (see #submitSchema).
        const resume = parsedSubmit;
        void this.#track(
          input.threadId,
          (async () => {
            const release = this.store.hold(input.threadId);
            let releaseLease: (() => Promise<void>) | undefined;
            try {
              releaseLease = await this.#holdLease(input.threadId, run.runId);
              await this.#runToolCall({
                threadId: input.threadId,
                runId: run.runId,
                toolCallId: action.toolCallId,
                toolName: action.toolName,
                input: part?.input,
                entry: { type: "resume", action: resolved, resume },
                request,
                agentEntry,
              });
              // The driver's lease hold is queued before this release, so the lease passes to it
              // in process instead of being released and taken again (two storage round trips).
              const driven = this.continueRun(input.threadId, run.runId, input.identity, input.scope);
              await releaseLease();
              releaseLease = undefined;
              await driven;
            } catch (error) {
              if (error instanceof LeaseLostError) {
                this.reportError({ error, phase: "run", threadId: input.threadId, runId: run.runId });
              } else await this.#failRun(input.threadId, run.runId, error);
            } finally {
              this.#inflightFor(run.runId).delete(action.toolCallId);
              await releaseLease?.();
              release();
            }
          })(),
        );
      } else {
        void this.continueRun(input.threadId, run.runId, input.identity, input.scope);
      }
      // A copy: the committed snapshot stays cached for the run, and the caller owns what it gets.
      return { action: structuredClone(resolved), version: result.version };
    } finally {
      held();
    }
  }

  /**
   * Runs an `onOutput` observer for an answer a client submitted. A throw fails the run
   * (reported in full to onRuntimeError) and the client gets a redacted error.
   */
  async #observeOutput(threadId: string, runId: string, observe: () => unknown): Promise<void> {
    try {
      await observe();
    } catch (error) {
      await this.#failRun(threadId, runId, new FatalHookError("onOutput", error));
      throw new PaiError("INTERNAL", REDACTED_ERROR_MESSAGE, { cause: error });
    }
  }

  #submitSchema(action: ActionRow, registration: RuntimeToolRegistration | undefined, run: RunRow) {
    if (action.kind === "suspend") {
      return registration?.tool.config.suspend?.[action.suspendName ?? ""]?.resumeSchema;
    }
    if (registration) return registration.tool.config.outputSchema;
    const clientTool = run.clientTools.find((tool) => tool.name === action.toolName);
    return clientTool?.outputSchema ? validatingJsonSchema(clientTool.outputSchema) : undefined;
  }

  // ---------------------------------------------------------------- recovery and shutdown

  /**
   * Adopts runs whose lease expired (their process died): interrupted tool calls become
   * `output-error`, an uncommitted model step is issued again, and queued runs start.
   */
  async recover(options: { limit?: number } = {}): Promise<number> {
    const candidates = await this.store.storage.listRecoverableRuns({
      now: this.now(),
      limit: options.limit ?? 50,
    });
    let adopted = 0;
    for (const candidate of candidates) {
      if (this.#drivers.has(candidate.runId)) continue;
      try {
        const snapshot = await this.store.load(candidate.threadId);
        const run = snapshot?.runs.find((item) => item.runId === candidate.runId);
        if (!snapshot || !run) continue;
        if (!this.#agents.has(snapshot.thread.agentId)) continue;
        if (run.status === "queued") {
          await this.#startQueued(snapshot);
          adopted++;
          continue;
        }
        adopted++;
        void this.continueRun(
          candidate.threadId,
          candidate.runId,
          run.identity ?? null,
          this.#scopeOf(snapshot),
        );
      } catch (error) {
        this.reportError({ error, phase: "recovery", threadId: candidate.threadId, runId: candidate.runId });
      }
    }
    return adopted;
  }

  async close(): Promise<void> {
    this.#closed = true;
    for (const controller of this.#aborts.values())
      controller.abort(new PaiError("CONFLICT", "The runtime closed."));
    await this.waitForAll().catch(() => undefined);
    await this.#runLeases.releaseAll();
    await this.capabilities.closeAll();
  }

  /** Test hook: whether this process holds any state for a thread. */
  holdsThread(threadId: string): boolean {
    return this.#work.has(threadId);
  }
}

function applyAll(snapshot: ThreadSnapshot, transition: Transition): ThreadSnapshot {
  if (!transition.ok) return snapshot;
  return transition.events.reduce(applyThreadEvent, snapshot);
}

function toJsonOrNull(value: unknown): JsonValue | null {
  if (value === undefined) return null;
  try {
    return normalizeJson(value);
  } catch {
    return null;
  }
}

function safeJson(value: unknown): JsonValue | undefined {
  if (value === undefined) return undefined;
  try {
    return normalizeJson(value);
  } catch {
    return null;
  }
}
