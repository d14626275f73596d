// The PAI work every latency table measures, on any storage.
import { createAgentRuntime, type Pai, type StorageV1, scopeFromIdentity } from "@pai/core";
import type { BenchEngine } from "./engines.ts";
import { benchAgent, turnModel } from "./fixtures.ts";

export const identity = { scopeKey: "bench", userKey: "bench-user" };

export function runtimeOn(
  storage: StorageV1,
  toolName: "add" | "approve",
  extra: { notifier?: BenchEngine["notifier"] } = {},
) {
  return createAgentRuntime({
    scope: scopeFromIdentity,
    agent: benchAgent,
    storage,
    model: turnModel(toolName),
    ...(extra.notifier ? { notifier: extra.notifier } : {}),
  });
}

export async function twoStepRun(pai: Pai) {
  const thread = await pai.service.threads.create({ identity });
  await pai.service.threads.send({ identity, threadId: thread.threadId, message: { text: "1+2?" } });
  await pai.waitForIdle(thread.threadId);
  return thread.threadId;
}

/** A two-step run with a live watcher attached from before the send until the run is idle. */
export async function watchedTwoStepRun(pai: Pai) {
  const thread = await pai.service.threads.create({ identity });
  const controller = new AbortController();
  let events = 0;
  const watching = (async () => {
    for await (const _event of pai.service.threads.watch({
      identity,
      threadId: thread.threadId,
      signal: controller.signal,
    }))
      events++;
  })();
  await pai.service.threads.send({ identity, threadId: thread.threadId, message: { text: "1+2?" } });
  await pai.waitForIdle(thread.threadId);
  controller.abort();
  await watching;
  return events;
}

/** Long enough never to pass in the bench: a call that waits answers when its run stops. */
export const WAIT_MS = 30_000;

/**
 * A tool suspends, the client learns of the pending action, answers it, and the run finishes.
 * The thread is created with its first message, and both calls wait for their run to stop
 * (`waitMs`), so the client needs no read: two calls, six commits. `suspendResumeCreateThenSend`
 * is the flow every round-2 pass before the nineteenth measured: create, send, read, submit.
 */
export async function suspendResume(pai: Pai) {
  const created = await pai.service.threads.create({ identity, message: { text: "ship?" }, waitMs: WAIT_MS });
  const action = created.settled?.snapshot.actions.find((candidate) => candidate.state === "pending");
  if (!action) throw new Error("bench: expected a pending action");
  const answered = await pai.service.actions.submit({
    identity,
    threadId: created.threadId,
    actionId: action.actionId,
    payload: { approved: true },
    waitMs: WAIT_MS,
  });
  if (!answered.settled?.done) throw new Error("bench: the run did not finish");
}

export async function suspendResumeCreateThenSend(pai: Pai) {
  const thread = await pai.service.threads.create({ identity });
  await pai.service.threads.send({ identity, threadId: thread.threadId, message: { text: "ship?" } });
  await pai.waitForIdle(thread.threadId);
  await readAndAnswer(pai, thread.threadId);
}

async function readAndAnswer(pai: Pai, threadId: string) {
  const snapshot = await pai.service.threads.get({ identity, threadId });
  const action = snapshot.actions.find((candidate) => candidate.state === "pending");
  if (!action) throw new Error("bench: expected a pending action");
  await pai.service.actions.submit({
    identity,
    threadId,
    actionId: action.actionId,
    payload: { approved: true },
  });
  await pai.waitForIdle(threadId);
}
