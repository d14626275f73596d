import type { JsonValue } from "../json/json-value.js";
import type { FilesV1 } from "../ports/files.js";
import type { NotifierV1 } from "../ports/notifier.js";
import type { ActionRow, ClientToolSnapshot, MessageRow, ThreadRow } from "../state/rows.js";
import type { ResolveRequest } from "./resolve-action.js";
import type { CreateThreadInput, RegisteredAgent, StartOrQueueInput } from "./runtime-core.js";
import type { RuntimeErrorReport } from "./runtime-options.js";
import type { ThreadStore } from "./thread-store.js";

/**
 * What the service (and so every transport) may ask of the runtime: read threads, start and
 * cancel runs, answer actions, reach files and notifications. Nothing here drives a run or
 * writes outside a command; the runtime's parts stay behind it.
 */
export interface RuntimeCommands {
  readonly store: Pick<ThreadStore, "load" | "read" | "loadForWrite" | "require" | "storage" | "kept">;
  readonly notifier: NotifierV1;
  readonly files: FilesV1 | undefined;
  readonly generateId: () => string;
  /** How long a watcher waits without a notification before it re-reads storage anyway. */
  readonly watchCatchUpMs: number;
  agent(agentId: string): RegisteredAgent;
  defaultAgentId(): string;
  json(value: unknown, label?: string): JsonValue;
  reportError(report: RuntimeErrorReport): void;
  createThread(input: CreateThreadInput): Promise<ThreadRow>;
  userMessage(
    threadId: string,
    message: { text: string; id?: string } | { id?: string; parts: unknown[] },
  ): MessageRow;
  validateClientTools(agentId: string, tools: ClientToolSnapshot[] | undefined): ClientToolSnapshot[];
  startOrQueueRun(input: StartOrQueueInput): Promise<{ runId: string; version: number; queued: boolean }>;
  cancelRunOf(threadId: string, reason: string | null): Promise<{ version: number }>;
  /** Settles once this process has no work in flight for the thread. */
  waitForIdle(threadId: string): Promise<void>;
  resolve(input: ResolveRequest): Promise<{ action: ActionRow; version: number }>;
}
