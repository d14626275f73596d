import { type JsonValue, normalizeJson } from "../json/json-value.js";
import { decideStartRun, type StartRunInput } from "../state/deciders/run-deciders.js";
import { decideCreateThread } from "../state/deciders/thread-deciders.js";
import type { ThreadRow } from "../state/rows.js";
import type { CreateThreadInput, RuntimeCore, StartOrQueueInput } from "./runtime-core.js";

// The commands that start a thread's runs: a message to an existing thread, and a new thread
// with (or without) its first message. Each is one commit through the runtime's writer.

/** Starts a run now, or queues it behind the active run, for the message that triggers it. */
export async function startOrQueueRun(
  rt: RuntimeCore,
  input: StartOrQueueInput,
): Promise<{ runId: string; version: number; queued: boolean }> {
  const runId = rt.generateId();
  // Held across the commit so the snapshot it produces stays cached for the driver.
  const release = rt.store.hold(input.threadId);
  try {
    const identity = toJsonOrNull(input.identity);
    const committed = await rt.writer.commit(
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

/**
 * Creates a thread; with `start`, its first message and run go in the same commit, which takes
 * the run's lease, so the new thread's run is driven as a sent message's would be.
 */
export async function createThread(rt: RuntimeCore, input: CreateThreadInput): Promise<ThreadRow> {
  rt.agent(input.agentId);
  const { start } = input;
  // The first message's run, decided with the creation: the same start `send` makes.
  const run: StartRunInput | undefined = start && {
    runId: rt.generateId(),
    message: start.message,
    trigger: { type: "message", messageId: start.message.messageId },
    clientTools: start.clientTools,
    clientData: start.clientData,
    identity: toJsonOrNull(start.identity),
    queueIfBusy: false,
    cancelPending: false,
  };
  // Held across the commit so the snapshot it produces stays cached for the driver.
  const release = start ? rt.store.hold(input.threadId) : undefined;
  try {
    const committed = await rt.writer.commit(
      input.threadId,
      (empty, now) =>
        decideCreateThread(
          empty,
          {
            scopeKey: input.scope.scopeKey,
            userKey: input.scope.userKey ?? null,
            agentId: input.agentId,
            title: input.title,
            metadata: input.metadata,
            ...(run ? { start: run } : {}),
          },
          now,
        ),
      { create: true, ...(start ? { origin: { identity: start.identity, scope: input.scope } } : {}) },
    );
    return committed.snapshot.thread;
  } finally {
    release?.();
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
