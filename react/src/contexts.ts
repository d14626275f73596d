import { PaiError } from "@pai/core";
import { createContext, useContext } from "react";
import type { PaiSession } from "./pai-session.js";

/** The session of the nearest `Pai.Provider`. */
export const PaiSessionContext = createContext<PaiSession | null>(null);

/** The thread id of the nearest `ThreadProvider`. */
export const ThreadIdContext = createContext<string | null>(null);

/** The nearest provider session; throws a clear error outside `Pai.Provider`. */
export function usePaiSession(hook: string): PaiSession {
  const session = useContext(PaiSessionContext);
  if (!session) {
    throw new PaiError(
      "INVALID_DEFINITION",
      `${hook} must be used inside <Pai.Provider client={paiClient}>. Wrap your app (or this subtree) in it.`,
    );
  }
  return session;
}
