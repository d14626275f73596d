import type {
  PaiPendingAction,
  PaiThreadMessage,
  PaiThreadState,
  PendingActionView,
  ThreadClient,
  ThreadSendOptions,
} from "@pai/client";
import { type AgentContract, type OutgoingMessage, PaiError, type SendResult } from "@pai/core";
import { useCallback, useContext, useEffect, useMemo, useSyncExternalStore } from "react";
import { ThreadIdContext, usePaiSession } from "./contexts.js";
import type { PaiSession } from "./pai-session.js";

/**
 * A thread as React components use it: live state plus commands that carry the client-tool
 * snapshot. `TAgent` is the agent (`typeof agent`) or its contract: an agent binding's
 * `useThread()` passes it, so messages and pending actions are typed with no type argument at
 * the call site. Without one, payloads stay `unknown` (the `@pai/client` low-level views).
 */
export type ThreadHandle<TAgent = AgentContract> = {
  id: string;
  /** The underlying `@pai/client` thread handle. */
  client: ThreadClient<TAgent>;
  state: PaiThreadState<TAgent>;
  /** Projected messages; `tool-<name>` parts narrow by `type`, then `state`, to the tool's types. */
  messages: PaiThreadMessage<TAgent>[];
  /**
   * Pending actions, a union discriminated by `name` (`tool.point` or `tool.output`): narrowing
   * on `name` types `input` and the `submit` payload. `submit` includes this provider
   * session's client-tool snapshot.
   */
  pending: PaiPendingAction<TAgent>[];
  /** Sends a user message with the frontend-defined tools in scope for this thread. */
  send(message: string | OutgoingMessage, options?: ThreadSendOptions): Promise<SendResult>;
  cancel(reason?: string): Promise<{ version: number }>;
  refresh(): Promise<PaiThreadState<TAgent>>;
  /**
   * The pending action of this exact message and tool part, or null; typed by the tool for a
   * `tool-<name>` part of the agent. The same signature as `ThreadClient.getPendingAction`.
   */
  getPendingAction: ThreadClient<TAgent>["getPendingAction"];
  /**
   * The oldest pending action with this qualified name (`"tool.point"` or `"tool.output"`), or
   * null; typed by the agent, like `ThreadClient.action`.
   */
  action: ThreadClient<TAgent>["action"];
};

const wrappedPending = new WeakMap<PaiThreadState, PendingActionView[]>();

function pendingOf(session: PaiSession, threadId: string, state: PaiThreadState): PendingActionView[] {
  let pending = wrappedPending.get(state);
  if (!pending) {
    pending = state.pending.map((action) => session.wrapAction(threadId, action));
    wrappedPending.set(state, pending);
  }
  return pending;
}

/** Subscribes to one thread's state (no observation side effects). */
export function useThreadState(session: PaiSession, threadId: string): PaiThreadState {
  const thread = session.thread(threadId);
  const subscribe = useCallback((listener: () => void) => thread.subscribe(listener), [thread]);
  const getState = useCallback(() => thread.getState(), [thread]);
  return useSyncExternalStore(subscribe, getState, getState);
}

/**
 * The thread of the nearest `ThreadProvider`, or the thread `threadId` names. While mounted,
 * this client observes the thread: it stays live and its client-tool actions are answered by
 * the handlers in scope.
 *
 * Prefer an agent binding's `useThread()` (`Pai.agent("main").useThread()`), which is typed by
 * that agent; the type argument here (`useThread<typeof agent>()`) only asserts the thread's
 * agent and changes nothing at runtime.
 */
export function useThread<TAgent = AgentContract>(threadId?: string): ThreadHandle<TAgent> {
  const session = usePaiSession("useThread()");
  const contextId = useContext(ThreadIdContext);
  const id = threadId ?? contextId;
  if (!id) {
    throw new PaiError(
      "INVALID_DEFINITION",
      "useThread() needs a thread: render it inside <ThreadProvider threadId={...}> or pass useThread(threadId).",
    );
  }
  useEffect(() => session.observe(id), [session, id]);
  const state = useThreadState(session, id);
  const thread = session.thread(id);
  const pending = pendingOf(session, id, state);
  const commands = useMemo(
    () => ({
      send: async (message: string | OutgoingMessage, options: ThreadSendOptions = {}) =>
        thread.send(message, {
          ...options,
          clientTools: options.clientTools ?? (await session.clientToolsFor(id)),
        }),
      cancel: (reason?: string) => thread.cancel(reason),
      refresh: () => thread.refresh(),
      getPendingAction: (message: { id: string }, part: { toolCallId: string } | { type: string }) => {
        const action = thread.getPendingAction(message, part);
        return action ? session.wrapAction(id, action) : null;
      },
    }),
    [session, thread, id],
  );
  const action = useMemo(
    () => (name: string) => pending.find((candidate) => candidate.name === name) ?? null,
    [pending],
  );
  // The agent exists only at the type level: the views are the same objects at runtime.
  return {
    id,
    client: thread,
    state,
    messages: state.messages,
    pending,
    action,
    ...commands,
  } as unknown as ThreadHandle<TAgent>;
}
