import { type ReactNode, useEffect } from "react";
import { ThreadIdContext, usePaiSession } from "./contexts.js";

export type ThreadProviderProps = { threadId: string; children?: ReactNode };

/**
 * Scopes a subtree to one thread: `useThread()` reads it, hook registrations below belong to it,
 * and this client observes the thread (keeps it live, answers its client tools) while mounted.
 */
export function ThreadProvider({ threadId, children }: ThreadProviderProps): ReactNode {
  const session = usePaiSession("<ThreadProvider>");
  useEffect(() => session.observe(threadId), [session, threadId]);
  return <ThreadIdContext.Provider value={threadId}>{children}</ThreadIdContext.Provider>;
}
