import { createPaiClient } from "@pai/client";
import { createPaiReact } from "@pai/react";
import { trpcTransport } from "@pai/transport-trpc/client";
import { createTRPCClient, httpBatchLink, httpSubscriptionLink, splitLink } from "@trpc/client";
import superjson from "superjson";
import { z } from "zod";
import type { PlaygroundAgent } from "../../server/agent.js";
import type { PlaygroundRouter } from "../../server/start-server.js";
import { lastSelection } from "./selection.js";

// One tRPC client for the whole app: the playground's own procedures (typed) and PAI's (through
// the transport). Identity is the `pai_user` cookie, which the browser sends with every request,
// EventSource subscriptions included.
export const trpc = createTRPCClient<PlaygroundRouter>({
  links: [
    splitLink({
      condition: (op) => op.type === "subscription",
      true: httpSubscriptionLink({ url: "/api/trpc", transformer: superjson }),
      false: httpBatchLink({ url: "/api/trpc", transformer: superjson }),
    }),
  ],
});

export const paiClient = createPaiClient({ transport: trpcTransport(trpc, { path: "pai" }) });

/** React bindings typed by the server's agent definition (a type-only import). */
export const Pai = createPaiReact<{ main: PlaygroundAgent }>();

/** Thrown by getSelectedText's execute when nothing is selected: the action then waits for a person. */
export class NothingSelected extends Error {
  constructor() {
    super("Nothing is selected; answer the form instead.");
    this.name = "NothingSelected";
  }
}

export const Main = Pai.agent("main", {
  clientTools: {
    // Server-declared client tool: the browser answers it automatically when text is selected.
    getSelectedText: {
      execute: () => {
        const text = lastSelection();
        if (!text) throw new NothingSelected();
        return { text };
      },
    },
    // Frontend-defined tool: the server learns about it from the snapshot each request carries.
    getBrowserInfo: {
      description: "Read the browser's language, time zone and local time.",
      inputSchema: z.object({}),
      outputSchema: z.object({ language: z.string(), timeZone: z.string(), localTime: z.string() }),
      execute: () => ({
        language: navigator.language,
        timeZone: Intl.DateTimeFormat().resolvedOptions().timeZone,
        localTime: new Date().toLocaleTimeString(),
      }),
    },
  },
});
