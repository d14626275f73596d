import { createPaiClient } from "@pai/client";
import { createPaiReact } from "@pai/react";
import { createTrpcTransport } from "@pai/transport-trpc/client";
import superjson from "superjson";
// Type-only: the page is typed by the server's agent without bundling any server code.
import type { AppAgent } from "../server/agent.ts";

export const paiClient = createPaiClient<AppAgent>({
  transport: createTrpcTransport({ url: "/api/trpc", transformer: superjson }),
});

/** React bindings typed by the agent: tool names, inputs and answers are checked. */
export const Pai = createPaiReact<{ main: AppAgent }>();

export const Assistant = Pai.agent("main", {
  clientTools: {
    // The server declared getLocalTime without `execute`; this page answers it whenever a
    // thread it shows asks.
    getLocalTime: {
      execute: () => ({
        time: new Date().toLocaleTimeString(),
        timeZone: Intl.DateTimeFormat().resolvedOptions().timeZone,
      }),
    },
  },
});
