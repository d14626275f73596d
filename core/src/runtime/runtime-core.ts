import type { JsonObject, JsonValue } from "../json/json-value.js";
import type { FilesV1 } from "../ports/files.js";
import type { NotifierV1 } from "../ports/notifier.js";
import type { ClientToolSnapshot, MessageRow, RunRow, ThreadRow } from "../state/rows.js";
import type { ThreadSnapshot } from "../state/snapshot.js";
import type { CapabilityRegistry } from "./capability-bindings.js";
import type { RuntimeAgentDefinition, RuntimeHooks, RuntimeScope } from "./definition-shapes.js";
import type { ModelHistory } from "./model-history.js";
import type { RunDispatch } from "./run-dispatch.js";
import type { RunLeases } from "./run-leases.js";
import type { RunRegistry } from "./run-registry.js";
import type { RunWriter } from "./run-writer.js";
import type { RuntimeEvent } from "./runtime-events.js";
import type { RuntimeErrorReport, RuntimeOptions } from "./runtime-options.js";
import type { ThreadStore } from "./thread-store.js";

/** One agent as registered in a runtime, with its registry id. */
export type RegisteredAgent = { id: string; definition: RuntimeAgentDefinition };

/**
 * What the runtime's parts share: the store and its one writer, leases, the registry of
 * in-flight work, and the commands one part asks of another (a tool's `ctx.agents` starts a
 * run, a finished call drives its run). Each concept lives in its own file and reaches the
 * others only through this interface.
 */
export interface RuntimeCore {
  readonly store: ThreadStore;
  readonly writer: RunWriter;
  readonly leases: RunLeases;
  readonly registry: RunRegistry;
  readonly notifier: NotifierV1;
  readonly files: FilesV1 | undefined;
  readonly capabilities: CapabilityRegistry;
  readonly options: RuntimeOptions;
  readonly hooks: RuntimeHooks | undefined;
  readonly history: ModelHistory;
  readonly generateId: () => string;
  readonly closed: boolean;
  /** A worker is handing its runs back (draining past its deadline): a run that stops is not failed. */
  readonly handingBack: boolean;
  readonly dispatch: RunDispatch;

  agent(agentId: string): RegisteredAgent;
  json(value: unknown, label?: string): JsonValue;
  now(): string;
  emit(event: RuntimeEvent): void;
  reportError(report: RuntimeErrorReport): void;

  continueRun(threadId: string, runId: string, identity: unknown, scope: RuntimeScope): Promise<void>;
  failRun(threadId: string, runId: string, error: unknown): Promise<void>;
  startOrQueueRun(input: StartOrQueueInput): Promise<{ runId: string; version: number; queued: boolean }>;
  createThread(input: CreateThreadInput): Promise<ThreadRow>;
  trigger(input: TriggerInput): Promise<{ runId: string; queued: boolean } | ScheduledTrigger>;
  cancelRunOf(threadId: string, reason: string | null): Promise<{ version: number }>;
  userMessage(
    threadId: string,
    message: { text: string; id?: string } | { id?: string; parts: unknown[] },
  ): MessageRow;
  waitForIdle(threadId: string): Promise<void>;
}

export type StartOrQueueInput = {
  threadId: string;
  identity: unknown;
  scope: RuntimeScope;
  message: MessageRow | null;
  trigger: RunRow["trigger"];
  clientTools: ClientToolSnapshot[];
  clientData: JsonValue | null;
  queueIfBusy: boolean;
  cancelPending?: boolean;
  /** The thread as the caller just read it (saves a second read). */
  snapshot?: ThreadSnapshot;
};

export type CreateThreadInput = {
  threadId: string;
  scope: RuntimeScope;
  agentId: string;
  title: string | null;
  metadata: JsonObject | null;
  /** The first message: its run starts in the commit that creates the thread. */
  start?: {
    identity: unknown;
    message: MessageRow;
    clientTools: ClientToolSnapshot[];
    clientData: JsonValue | null;
  };
};

export type TriggerInput = {
  threadId: string;
  scope: RuntimeScope;
  identity: unknown;
  notification?: string;
  data?: unknown;
  hidden?: boolean;
  clientTools?: ClientToolSnapshot[];
  /** Fire later instead of now: at an instant, or on a cron expression (a schedule on the thread). */
  at?: Date | string;
  cron?: string;
  timezone?: string;
};

/** What a trigger with a time returns: the schedule it created. */
export type ScheduledTrigger = { scheduleId: string; nextAt: string | null };
