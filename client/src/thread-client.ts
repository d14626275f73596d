import {
  type ActionResult,
  type AgentContract,
  getErrorMessage,
  type LiveEvent,
  type OutgoingMessage,
  PaiError,
  type RunRequestOptions,
  type RunRow,
  type SendResult,
  type ThreadRow,
  type ThreadSnapshot,
  type ToolDataRow,
  type WatchEvent,
} from "@pai/core";
import { applyStoredEvents, type PendingActionData, projectThreadState } from "@pai/core/protocol";
import type { PendingActionView } from "./pending-action-view.js";
import type { PaiTransport } from "./transport.js";
import type { PaiThreadMessage } from "./typed-message.js";
import type {
  PaiPendingAction,
  PendingActionForPart,
  PendingActionName,
  PendingActionNamed,
} from "./typed-pending-action.js";

/** Text streamed live for a message since its last committed version. */
export type LiveMessageText = { runId: string; messageId: string; text: string; reasoning: string };

export type ThreadConnection = "closed" | "connecting" | "open";

/**
 * The client state of one thread. A new object on every change, so it can feed `useSyncExternalStore`.
 * With a contract (`createPaiClient<typeof agent>`), tool parts and pending actions are typed
 * from it; without one they are the contract-erased projections.
 */
export type PaiThreadState<TAgent = AgentContract> = {
  /** `idle` before the first load; `error` when loading or watching failed for good. */
  status: "idle" | "loading" | "ready" | "error";
  thread: ThreadRow | null;
  version: number;
  messages: PaiThreadMessage<TAgent>[];
  /** The active run, else the latest one. */
  run: RunRow | null;
  /** Pending actions in creation order; with a contract, a union discriminated by `name`. */
  pending: PaiPendingAction<TAgent>[];
  /** Transient streamed text per message, cleared when that message is committed. */
  live: LiveMessageText[];
  connection: ThreadConnection;
  error: PaiError | null;
};

export type ThreadSendOptions = RunRequestOptions & {
  /** Cancel the thread's pending actions (model-visibly) before appending the message. */
  cancelPending?: boolean;
};

export type ThreadWatchOptions = {
  /** Delay before the first reconnect; doubles per failed attempt up to `maxRetryDelayMs`. */
  retryDelayMs?: number;
  maxRetryDelayMs?: number;
};

type Listener = () => void;
type LiveListener = (event: LiveEvent) => void;

const RETRYABLE = new Set<string>(["INTERNAL", "CONFLICT"]);

/** Errors a reconnect cannot fix (wrong id, no access, bad input) stop the watch. */
function isRetryable(error: unknown): boolean {
  if (!PaiError.isInstance(error)) return true;
  return RETRYABLE.has(error.code);
}

function toClientError(error: unknown): PaiError {
  if (PaiError.isInstance(error)) return error;
  return new PaiError("INTERNAL", `Could not reach the PAI server: ${getErrorMessage(error)}`, {
    cause: error,
  });
}

function failurePayload(error: unknown): string | { message: string } {
  if (typeof error === "string") return error;
  if (error instanceof Error) return { message: error.message };
  if (
    typeof error === "object" &&
    error !== null &&
    typeof (error as { message?: unknown }).message === "string"
  ) {
    return { message: (error as { message: string }).message };
  }
  return getErrorMessage(error);
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal.removeEventListener("abort", done);
      resolve();
    }
    signal.addEventListener("abort", done, { once: true });
  });
}

const TERMINAL_RUN = new Set(["completed", "failed", "cancelled"]);

/**
 * One thread as seen by a client: a snapshot kept current by `watch()`, projected to the
 * client view after every change. Durable state only ever comes from committed events or a
 * fresh load, so a watcher and a reload agree.
 */
export class ThreadClient<TAgent = AgentContract> {
  readonly id: string;
  readonly #transport: PaiTransport;
  #snapshot: ThreadSnapshot | null = null;
  #state: PaiThreadState<TAgent>;
  #transient = new Map<string, ToolDataRow>();
  #live = new Map<string, LiveMessageText>();
  #listeners = new Set<Listener>();
  #liveListeners = new Set<LiveListener>();
  #watchers = 0;
  #watchAbort: AbortController | null = null;
  #watchOptions: Required<ThreadWatchOptions> = { retryDelayMs: 250, maxRetryDelayMs: 5_000 };
  #refreshing: Promise<PaiThreadState<TAgent>> | null = null;

  constructor(transport: PaiTransport, threadId: string) {
    this.#transport = transport;
    this.id = threadId;
    this.#state = {
      status: "idle",
      thread: null,
      version: 0,
      messages: [],
      run: null,
      pending: [],
      live: [],
      connection: "closed",
      error: null,
    };
  }

  /** The current state; the same object until something changes. */
  getState(): PaiThreadState<TAgent> {
    return this.#state;
  }

  /** Calls `listener` after every state change. Returns an unsubscribe function. */
  subscribe(listener: Listener): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /** Receives transient live events (text deltas, tool input, transient tool data) while watching. */
  onLiveEvent(listener: LiveListener): () => void {
    this.#liveListeners.add(listener);
    return () => this.#liveListeners.delete(listener);
  }

  /** Loads the thread's current state from the server. Concurrent calls share one request. */
  refresh(): Promise<PaiThreadState<TAgent>> {
    if (this.#refreshing) return this.#refreshing;
    if (this.#state.status === "idle") this.#update({ status: "loading" });
    const request = this.#transport.threads
      .get({ threadId: this.id })
      .then((snapshot) => {
        // A watcher may have advanced past this response while it was in flight.
        if (!this.#snapshot || snapshot.thread.version >= this.#snapshot.thread.version)
          this.#snapshot = snapshot;
        this.#project({ status: "ready", error: null });
        return this.#state;
      })
      .catch((error: unknown) => {
        const clientError = toClientError(error);
        this.#update({ status: "error", error: clientError });
        throw clientError;
      })
      .finally(() => {
        this.#refreshing = null;
      });
    this.#refreshing = request;
    return request;
  }

  /**
   * Keeps the state live: loads the thread if needed, applies committed events as they arrive
   * and reconnects after a drop, resuming after the last applied version. Several callers
   * share one connection; the returned function stops this caller's interest.
   */
  watch(options: ThreadWatchOptions = {}): () => void {
    this.#watchOptions = { ...this.#watchOptions, ...options };
    this.#watchers += 1;
    if (!this.#watchAbort) {
      const abort = new AbortController();
      this.#watchAbort = abort;
      void this.#watchLoop(abort.signal).finally(() => {
        if (this.#watchAbort === abort) this.#watchAbort = null;
      });
    }
    let stopped = false;
    return () => {
      if (stopped) return;
      stopped = true;
      this.#watchers -= 1;
      if (this.#watchers === 0) {
        this.#watchAbort?.abort();
        this.#watchAbort = null;
      }
    };
  }

  /** Appends a user message and starts a run. Refreshes afterwards unless a watch keeps the state live. */
  async send(message: string | OutgoingMessage, options: ThreadSendOptions = {}): Promise<SendResult> {
    const outgoing: OutgoingMessage = typeof message === "string" ? { text: message } : message;
    const result = await this.#call(() =>
      this.#transport.threads.send({ threadId: this.id, message: outgoing, ...options }),
    );
    await this.#afterCommand();
    return result;
  }

  /** Cancels the active run: pending actions are cancelled and unfinished calls recorded as cancelled. */
  async cancel(reason?: string): Promise<{ version: number }> {
    const result = await this.#call(() =>
      this.#transport.threads.cancel({ threadId: this.id, ...(reason === undefined ? {} : { reason }) }),
    );
    await this.#afterCommand();
    return result;
  }

  /**
   * The pending action created by this exact message and native tool part, or null. For a
   * `tool-<name>` part of the contract it is typed by that tool's suspend points and output.
   */
  getPendingAction<TPart extends { toolCallId: string } | { type: string }>(
    message: { id: string },
    part: TPart,
  ): PendingActionForPart<TAgent, TPart> | null {
    if (!("toolCallId" in part)) return null;
    const found = this.#state.pending.find(
      (action) => action.origin.messageId === message.id && action.origin.toolCallId === part.toolCallId,
    );
    return (found ?? null) as PendingActionForPart<TAgent, TPart> | null;
  }

  /**
   * The oldest pending action with this qualified name (`"tool.point"` or `"tool.output"`), or
   * null; typed by the contract. Several calls of one tool can wait at once: filter
   * `getState().pending` by `name` to see them all.
   *
   * (`TName` is checked by the parameter's conditional type rather than by a constraint: with a
   * constraint, an unknown name made TypeScript fall back to every action and report a second
   * error about the intersection of all payloads; now only the name is reported.)
   */
  action<TName extends string>(
    name: TName extends PendingActionName<TAgent> ? TName : PendingActionName<TAgent>,
  ):
    | (TName extends PendingActionName<TAgent>
        ? PendingActionNamed<TAgent, TName>
        : PendingActionView<TAgent>)
    | null {
    const found = this.#state.pending.find((action) => action.name === name);
    return (found ?? null) as never;
  }

  async #call<T>(run: () => Promise<T>): Promise<T> {
    try {
      return await run();
    } catch (error) {
      throw toClientError(error);
    }
  }

  async #afterCommand(): Promise<void> {
    if (this.#watchers > 0) return;
    await this.refresh().catch(() => undefined);
  }

  #toView(data: PendingActionData): PendingActionView<TAgent> {
    const threadId = this.id;
    const actionId = data.ref.actionId;
    const command = async (run: () => Promise<ActionResult>) => {
      const result = await this.#call(run);
      await this.#afterCommand();
      return result;
    };
    return {
      ...data,
      submit: (resume, options = {}) =>
        command(() => this.#transport.actions.submit({ ...options, threadId, actionId, payload: resume })),
      cancel: (input = {}) =>
        command(() =>
          this.#transport.actions.cancel({
            threadId,
            actionId,
            ...(input.reason === undefined ? {} : { reason: input.reason }),
          }),
        ),
      fail: (error) =>
        command(() => this.#transport.actions.fail({ threadId, actionId, error: failurePayload(error) })),
    };
  }

  #update(patch: Partial<PaiThreadState<TAgent>>): void {
    this.#state = { ...this.#state, ...patch };
    for (const listener of [...this.#listeners]) listener();
  }

  #project(patch: Partial<PaiThreadState<TAgent>> = {}): void {
    if (!this.#snapshot) {
      this.#update(patch);
      return;
    }
    const view = projectThreadState(this.#snapshot, { transientToolData: [...this.#transient.values()] });
    this.#update({
      thread: view.thread,
      version: view.version,
      // The contract exists only at the type level: the projection is the same at runtime.
      messages: view.messages as PaiThreadMessage<TAgent>[],
      run: view.run,
      pending: view.pending.map((data) => this.#toView(data) as PaiPendingAction<TAgent>),
      live: [...this.#live.values()],
      ...patch,
    });
  }

  async #watchLoop(signal: AbortSignal): Promise<void> {
    let attempt = 0;
    while (!signal.aborted) {
      try {
        if (!this.#snapshot) await this.refresh();
        this.#update({ connection: "connecting" });
        const events = this.#transport.threads.watch({
          threadId: this.id,
          afterVersion: this.#snapshot?.thread.version ?? 0,
          signal,
          onOpen: () => {
            if (!signal.aborted) this.#update({ connection: "open" });
          },
        });
        for await (const event of events) {
          if (signal.aborted) break;
          if (this.#state.connection !== "open") this.#update({ connection: "open" });
          attempt = 0;
          await this.#handle(event);
        }
      } catch (error) {
        if (signal.aborted) break;
        if (!isRetryable(error)) {
          this.#update({ status: "error", error: toClientError(error), connection: "closed" });
          return;
        }
      }
      if (signal.aborted) break;
      this.#update({ connection: "connecting" });
      const { retryDelayMs, maxRetryDelayMs } = this.#watchOptions;
      await sleep(Math.min(maxRetryDelayMs, retryDelayMs * 2 ** attempt), signal);
      attempt += 1;
    }
    this.#update({ connection: "closed" });
  }

  async #handle(event: WatchEvent): Promise<void> {
    if (event.type === "live") return this.#handleLive(event.event);
    const current = this.#snapshot?.thread.version ?? 0;
    // Duplicates after a reconnect are skipped; a gap means events were missed, so reload.
    if (event.version <= current) return;
    if (!this.#snapshot || event.version > current + 1) {
      await this.refresh().catch(() => undefined);
      if (this.#snapshot && event.version <= this.#snapshot.thread.version) return;
      if (!this.#snapshot) return;
    }
    this.#snapshot = applyStoredEvents(this.#snapshot, event);
    for (const item of event.events) {
      if (item.type === "message-upserted") this.#live.delete(item.message.messageId);
      if (item.type === "run-upserted" && TERMINAL_RUN.has(item.run.status))
        this.#clearRunLive(item.run.runId);
    }
    this.#project({ status: "ready", error: null });
  }

  #clearRunLive(runId: string): void {
    for (const [key, live] of this.#live) if (live.runId === runId) this.#live.delete(key);
    // Transient tool data only lives while its run does: after the run, live equals reload.
    this.#transient.clear();
  }

  #handleLive(event: LiveEvent): void {
    for (const listener of [...this.#liveListeners]) listener(event);
    switch (event.type) {
      case "text-delta":
      case "reasoning-delta": {
        const current = this.#live.get(event.messageId) ?? {
          runId: event.runId,
          messageId: event.messageId,
          text: "",
          reasoning: "",
        };
        const next =
          event.type === "text-delta"
            ? { ...current, text: current.text + event.delta }
            : { ...current, reasoning: current.reasoning + event.delta };
        this.#live.set(event.messageId, next);
        this.#update({ live: [...this.#live.values()] });
        return;
      }
      case "tool-data-transient": {
        const { item } = event;
        this.#transient.set(`${item.toolCallId}\u0000${item.channel}\u0000${item.itemId}`, item);
        this.#project();
        return;
      }
      default:
        return;
    }
  }
}
