import type { PaiThreadState, PendingActionView, ThreadClient, ThreadSendOptions } from "@pai/client";
import { type OutgoingMessage, PaiError, type SendResult } from "@pai/core";
import type { ProjectedMessage } from "@pai/core/protocol";
import { useCallback, useContext, useEffect, useMemo, useSyncExternalStore } from "react";
import { ThreadIdContext, usePaiSession } from "./contexts.js";
import type { PaiSession } from "./pai-session.js";

/** A thread as React components use it: live state plus commands that carry the client-tool snapshot. */
export type ThreadHandle = {
  id: string;
  /** The underlying `@pai/client` thread handle. */
  client: ThreadClient;
  state: PaiThreadState;
  messages: ProjectedMessage[];
  /** Pending actions; `submit` includes this provider session's client-tool snapshot. */
  pending: PendingActionView[];
  /** Sends a user message with the frontend-defined tools in scope for this thread. */
  send(message: string | OutgoingMessage, options?: ThreadSendOptions): Promise<SendResult>;
  cancel(reason?: string): Promise<{ version: number }>;
  refresh(): Promise<PaiThreadState>;
  /** The pending action of this exact message and tool part, or null. */
  getPendingAction(
    message: { id: string },
    part: { toolCallId: string } | { type: string },
  ): PendingActionView | null;
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
 */
export function useThread(threadId?: string): ThreadHandle {
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
  return {
    id,
    client: thread,
    state,
    messages: state.messages,
    pending: pendingOf(session, id, state),
    ...commands,
  };
}
