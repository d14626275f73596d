import type { JsonObject } from "../../json/json-value.js";
import type { ThreadRow } from "../rows.js";
import { applyThreadEvents, type ThreadSnapshot } from "../snapshot.js";
import { createThread } from "../transitions.js";
import { type Decision, decided } from "./decision.js";
import { decideStartRun, type StartRunInput } from "./run-deciders.js";

export type CreateThreadDecisionInput = {
  scopeKey: string;
  userKey: string | null;
  agentId: string;
  title: string | null;
  metadata: JsonObject | null;
  /**
   * The thread's first message, when the caller sends it with the creation: the run starts in
   * the same commit, so a new conversation costs one write and one round trip, not two.
   */
  start?: StartRunInput;
};

/**
 * Creates a thread on the empty snapshot a creating commit decides on, and starts its first run
 * when asked. A new thread has no run and no message, so starting cannot be refused for being
 * busy; a refusal can only come from the message itself.
 */
export function decideCreateThread(
  empty: ThreadSnapshot,
  input: CreateThreadDecisionInput,
  now: string,
): Decision<undefined> {
  const thread: ThreadRow = {
    threadId: empty.thread.threadId,
    scopeKey: input.scopeKey,
    userKey: input.userKey,
    agentId: input.agentId,
    title: input.title,
    status: "idle",
    version: 0,
    activeRunId: null,
    metadata: input.metadata,
    createdAt: now,
    updatedAt: now,
  };
  const created = createThread({ thread });
  if (!created.ok) return created;
  if (!input.start) return decided(created.events, [], undefined);
  const started = decideStartRun(applyThreadEvents(empty, created.events), input.start, now);
  if (!started.ok) return started;
  return decided([...created.events, ...started.events], started.effects, undefined);
}
