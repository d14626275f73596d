// A client of the host app: its own typed tRPC client for the host's procedures, and a
// `@pai/client` over `createTrpcTransport` for PAI's. Prints one JSON line per step.
import { createPaiClient, type PaiThreadState } from "@pai/client";
import { PaiError } from "@pai/core";
import { createTrpcTransport } from "@pai/transport-trpc/client";
import { createTRPCClient, httpLink } from "@trpc/client";
import superjson from "superjson";
import type { agent } from "./agent.js";
import type { AppRouter } from "./server.js";

const url = process.argv[2];
if (!url) throw new Error("usage: node client.js <server url>");
const headers = { authorization: "Bearer token-ana" };
const step = (name: string, data: Record<string, unknown>) =>
  console.log(JSON.stringify({ step: name, ...data }));

const trpc = createTRPCClient<AppRouter>({ links: [httpLink({ url, transformer: superjson, headers })] });
const health = await trpc.health.query();
const me = await trpc.me.query();
step("host", { health: health.ok, userId: me.id, orgId: me.orgId });

// Without a token the host's middleware refuses the call before PAI runs.
const anonymous = createPaiClient({ transport: createTrpcTransport({ url, transformer: superjson }) });
const refused = await anonymous.createThread().then(
  () => null,
  (error: unknown) => (PaiError.isInstance(error) ? error.code : String(error)),
);
step("anonymous", { refused });

const client = createPaiClient<typeof agent>({
  transport: createTrpcTransport({ url, transformer: superjson, headers }),
});
type State = PaiThreadState<typeof agent>;
const thread = await client.createThread({ agentId: "main", title: "Q3 report" });
step("created", { threadId: thread.id });

async function until(check: (state: State) => boolean, what: string): Promise<State> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const state = await thread.refresh();
    if (check(state)) return state;
    if (Date.now() > deadline) throw new Error(`Timed out waiting for ${what}: ${JSON.stringify(state.run)}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

const sent = await thread.send("Send the Q3 report to the board");
step("sent", { runId: sent.runId });

const waiting = await until((state) => state.pending.length > 0, "the approval");
const approval = thread.action("requestApproval.approval");
if (!approval) throw new Error("No requestApproval.approval action is pending");
step("pending", {
  name: approval.name,
  prompt: approval.input.prompt,
  runStatus: waiting.run?.status ?? null,
  threadStatus: waiting.thread?.status ?? null,
});

await approval.submit({ approved: true });
const done = await until(
  (state) => state.run?.status === "completed" && state.pending.length === 0,
  "the run to complete",
);
const parts = done.messages.filter((message) => message.role === "assistant").flatMap((m) => m.parts);
const texts = parts.flatMap((part) => (part.type === "text" ? [part.text] : []));
const tool = parts.find((part) => part.type === "tool-requestApproval");
step("completed", {
  runStatus: done.run?.status ?? null,
  pending: done.pending.length,
  toolState: tool && "state" in tool ? tool.state : null,
  toolOutput: tool && "output" in tool ? tool.output : null,
  text: texts.join(" "),
});
