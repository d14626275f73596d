import type { ActionRow, AgentContract, JsonObject, ListResult, ThreadRow } from "@pai/core";
import { createFilesClient, type PaiFilesClient } from "./files-client.js";
import { ThreadClient } from "./thread-client.js";
import type { PaiTransport } from "./transport.js";

export type PaiClientOptions = {
  transport: PaiTransport;
  /** Used by `files.download` to follow presigned download URLs. Default: the global `fetch`. */
  fetch?: typeof fetch;
};

/** A PAI client. `TAgent` is the agent (contract) it talks to; it narrows typed bindings. */
export type PaiClient<TAgent = AgentContract> = {
  readonly transport: PaiTransport;
  /** The handle of one thread; the same handle for the same id. */
  thread(threadId: string): ThreadClient<TAgent>;
  /** Creates a thread and returns its handle. */
  createThread(input?: Parameters<PaiTransport["threads"]["create"]>[0]): Promise<ThreadClient<TAgent>>;
  listThreads(input?: Parameters<PaiTransport["threads"]["list"]>[0]): Promise<ListResult<ThreadRow>>;
  /** Actions of the caller's scope across threads (an operator inbox), newest state first by server order. */
  listActions(input?: Parameters<PaiTransport["actions"]["list"]>[0]): Promise<ListResult<ActionRow>>;
  manifest(input?: { agentId?: string }): Promise<JsonObject>;
  /** Upload and download files of the caller's scope. */
  files: PaiFilesClient;
};

/**
 * Creates a transport-agnostic PAI client. Pass the agent (`typeof agent`) or its contract as
 * the type argument to type tool parts and pending actions from it; without one, payloads stay
 * `unknown`. The type argument changes no runtime behaviour.
 *
 * @example
 * const client = createPaiClient<typeof agent>({ transport: createTrpcTransport({ url: "/api/trpc" }) });
 * const thread = client.thread(threadId);
 * const stop = thread.watch();
 * await thread.action("requestApproval.approval")?.submit({ approved: true });
 */
export function createPaiClient<TAgent = AgentContract>(options: PaiClientOptions): PaiClient<TAgent> {
  const { transport } = options;
  const threads = new Map<string, ThreadClient<TAgent>>();
  const thread = (threadId: string): ThreadClient<TAgent> => {
    let handle = threads.get(threadId);
    if (!handle) {
      handle = new ThreadClient<TAgent>(transport, threadId);
      threads.set(threadId, handle);
    }
    return handle;
  };
  return {
    transport,
    thread,
    createThread: async (input = {}) => thread((await transport.threads.create(input)).threadId),
    listThreads: (input) => transport.threads.list(input),
    listActions: (input) => transport.actions.list(input),
    manifest: (input) => transport.manifest(input),
    files: createFilesClient(transport, options.fetch ? { fetch: options.fetch } : {}),
  };
}
