/** Identifies the run an event belongs to. */
export type RuntimeEventRun = {
  threadId: string;
  runId: string;
  /** Registry id of the agent driving the thread. */
  agentId: string;
  scopeKey: string;
};

/** Identifies one top-level tool call. */
export type RuntimeEventToolCall = RuntimeEventRun & {
  /** The registration name the model called. */
  toolName: string;
  toolCallId: string;
};

/**
 * What the engine reports to observers while it works, in order, as it happens in this
 * process. Ids only: inputs, outputs and payloads never appear here, so an observer cannot
 * leak them by accident.
 */
export type RuntimeEvent =
  /** A run started running (a new run, or a queued run whose turn came). */
  | (RuntimeEventRun & { type: "run-start" })
  /** A run completed, failed or was cancelled. */
  | (RuntimeEventRun & {
      type: "run-end";
      status: "completed" | "failed" | "cancelled";
      /** The client-safe failure message of a failed run. */
      error?: string;
    })
  /** A model step began: tool preparation, the model call, then executing its tool calls. */
  | (RuntimeEventRun & { type: "step-start"; step: number })
  /** The step's model call is about to stream. */
  | (RuntimeEventRun & { type: "model-start"; step: number; provider: string; modelId: string })
  /** The step's model call finished streaming (or failed). */
  | (RuntimeEventRun & { type: "model-end"; step: number; toolCalls: number; error?: unknown })
  /** The step and the tool calls it executed are done (or the step threw). */
  | (RuntimeEventRun & { type: "step-end"; step: number; error?: unknown })
  /** A backend tool call starts executing: the first time, or again after a resume. */
  | (RuntimeEventToolCall & { type: "tool-start"; entry: "initial" | "resume" })
  /** A backend tool call finished executing. `suspended` means it is waiting on a pending action. */
  | (RuntimeEventToolCall & {
      type: "tool-end";
      outcome: "output" | "error" | "suspended";
      /** The model-visible error text when `outcome` is `error`. */
      errorText?: string;
    })
  /**
   * A pending action was created: a tool suspended at a wait point (`actionKind: "suspend"`),
   * or a client must supply a tool's output (`actionKind: "output"`).
   */
  | (RuntimeEventToolCall & {
      type: "suspend";
      actionId: string;
      actionName: string;
      actionKind: "suspend" | "output";
    })
  /** A pending action was answered with submit, cancel or fail. */
  | (RuntimeEventToolCall & {
      type: "action-resolved";
      actionId: string;
      actionName: string;
      actionKind: "suspend" | "output";
      resolution: "submit" | "cancel" | "fail";
    });

/** The `type` of a runtime event. */
export type RuntimeEventType = RuntimeEvent["type"];

/**
 * Receives runtime events synchronously, in order. Observers must not throw and should not
 * block: a throw (or a rejected promise) is reported to `onRuntimeError` and otherwise ignored,
 * and a returned promise is not awaited.
 */
export type RuntimeObserver = (event: RuntimeEvent) => void | Promise<void>;
