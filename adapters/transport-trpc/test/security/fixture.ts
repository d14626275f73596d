import { createPai, defineAgent, defineTool } from "@pai/core";
import { scriptedModel } from "@pai/core/testing";
import { kyselyStorage, migrateToLatest } from "@pai/storage-kysely";
import { memoryFiles } from "@pai/storage-memory";
import { z } from "zod";
import type { TestEngine } from "../../../storage-kysely/test/support/engines.js";
import { type HostileHost, type HostUser, startHostileHost } from "./hostile-host.js";
import { mutationReq, send } from "./raw-http.js";

/**
 * The system under attack: a real runtime (`createPai`, Kysely storage on a fresh table prefix,
 * a scripted model) behind the host app over real HTTP, with tenant A's data in place.
 */

export const alice: HostUser = { userId: "alice", scopeKey: "tenant-a" };
export const bob: HostUser = { userId: "bob", scopeKey: "tenant-b" };

/** Strings only tenant A's data holds: none may ever appear in an answer to B. */
export const SECRETS = {
  title: "alice-title-7c1f0e",
  metadata: "alice-meta-93ab4d",
  message: "approve alice-msg-52de88",
  scopeKey: alice.scopeKey,
  filename: "alice-file-0d41.txt",
} as const;

/** (a) + (c): suspends at an approval wait point and writes tool data declared in dataSchemas. */
const requestApproval = defineTool({
  id: "security.request-approval.v1",
  description: "Ask a person to approve before sending",
  inputSchema: z.object({ summary: z.string() }),
  outputSchema: z.object({ approved: z.boolean() }),
  dataSchemas: { progress: z.object({ step: z.string() }) },
  suspend: {
    approval: {
      suspendSchema: z.object({ prompt: z.string() }),
      resumeSchema: z.object({ approved: z.boolean() }),
    },
  },
  execute: async (ctx) => {
    if (ctx.entry.type === "initial") {
      await ctx.data.write("progress", { step: "asked" }, { id: "asked" });
      return ctx.suspend("approval", { prompt: ctx.input.summary });
    }
    if (ctx.entry.type === "resume" && ctx.entry.name === "approval") return ctx.entry.resume;
    throw new Error("Unsupported tool entry");
  },
});

/** (b): no execute, so the pending action is an output action answered by a client. */
const getSelectedText = defineTool({
  id: "security.get-selected-text.v1",
  description: "Read the user's selection",
  inputSchema: z.object({}),
  outputSchema: z.object({ text: z.string() }),
});

/** (c): a tool with dataSchemas that runs to completion. */
const lookup = defineTool({
  id: "security.lookup.v1",
  description: "Look something up",
  inputSchema: z.object({ query: z.string() }),
  outputSchema: z.object({ found: z.number() }),
  dataSchemas: { hits: z.object({ count: z.number() }) },
  execute: async (ctx) => {
    await ctx.data.write("hits", { count: 3 }, { id: "hits" });
    return { found: 3 };
  },
});

export const agent = defineAgent({ name: "main", tools: { requestApproval, getSelectedText, lookup } });

type PromptMessage = { role: string; content: unknown };

/** "approve …" calls all three tools in one step (one suspends, one waits for its output); a tool result gets "Done."; anything else an echo. */
function script(call: { prompt: PromptMessage[] }) {
  const last = call.prompt.at(-1);
  if (last?.role === "tool") return { text: ["Do", "ne."] };
  const content = Array.isArray(last?.content)
    ? (last.content as Array<{ type: string; text?: string }>)
    : [];
  const text = content.map((part) => part.text ?? "").join("");
  if (text.startsWith("approve")) {
    return {
      toolCalls: [
        { toolName: "requestApproval", input: { summary: text } },
        { toolName: "getSelectedText", input: {} },
        { toolName: "lookup", input: { query: text } },
      ],
    };
  }
  return { text: ["echo: ", text] };
}

function createRuntime(engine: TestEngine) {
  return createPai({
    agents: { main: agent },
    storage: kyselyStorage({ db: engine.db, tablePrefix: engine.prefix }),
    model: scriptedModel((call) => script(call as unknown as { prompt: PromptMessage[] }) as never),
    files: memoryFiles(),
    scope: (identity: { userId: string; scopeKey: string }) => ({
      scopeKey: identity.scopeKey,
      userKey: identity.userId,
    }),
  });
}

export type Runtime = ReturnType<typeof createRuntime>;

/** A thread of one tenant with a pending approval action and a pending output action. */
export type TenantThread = { threadId: string; approvalId: string; outputId: string };

export type Fixture = {
  engine: TestEngine;
  pai: Runtime;
  host: HostileHost;
  a: TenantThread & { fileId: string; messageIds: string[] };
  /** B's own thread with pending actions (re-created when a case consumed them). */
  b(): Promise<TenantThread>;
  close(): Promise<void>;
};

async function pendingActions(pai: Runtime, user: HostUser, threadId: string) {
  for (let attempt = 0; attempt < 500; attempt++) {
    await pai.waitForIdle(threadId);
    const snapshot = await pai.service.threads.get({ identity: user, threadId });
    const pending = snapshot.actions.filter((action) => action.state === "pending");
    const approval = pending.find((action) => action.name === "requestApproval.approval");
    const output = pending.find((action) => action.name === "getSelectedText.output");
    if (approval && output) return { approvalId: approval.actionId, outputId: output.actionId };
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  throw new Error(`The run of thread ${threadId} never waited on its two pending actions.`);
}

/** Creates a thread and sends "approve …" over HTTP as the user, until it waits on both actions. */
async function tenantThread(
  pai: Runtime,
  host: HostileHost,
  user: HostUser,
  input: { title: string; metadata: Record<string, string>; text: string },
): Promise<TenantThread> {
  const created = await send(
    host.url,
    user,
    mutationReq("pai.threads.create", { title: input.title, metadata: input.metadata }),
  );
  if (!created.ok) throw new Error(`setup: threads.create failed: ${created.status} ${created.message}`);
  const { threadId } = created.data as { threadId: string };
  const sent = await send(
    host.url,
    user,
    mutationReq("pai.threads.send", { threadId, message: { text: input.text } }),
  );
  if (!sent.ok) throw new Error(`setup: threads.send failed: ${sent.status} ${sent.message}`);
  return { threadId, ...(await pendingActions(pai, user, threadId)) };
}

export async function createFixture(engine: TestEngine): Promise<Fixture> {
  await migrateToLatest(engine.db, { tablePrefix: engine.prefix });
  const pai = createRuntime(engine);
  const host = await startHostileHost(pai.service);
  const thread = await tenantThread(pai, host, alice, {
    title: SECRETS.title,
    metadata: { secret: SECRETS.metadata },
    text: SECRETS.message,
  });
  const file = await pai.service.files.upload({
    identity: alice,
    threadId: thread.threadId,
    filename: SECRETS.filename,
    mediaType: "text/plain",
    body: new TextEncoder().encode("alice's file"),
    metadata: { secret: SECRETS.metadata },
  });
  const snapshot = await pai.service.threads.get({ identity: alice, threadId: thread.threadId });

  let bobThread: TenantThread | null = null;
  const b = async () => {
    if (bobThread) {
      await pai.waitForIdle(bobThread.threadId);
      const current = await pai.service.threads.get({ identity: bob, threadId: bobThread.threadId });
      const pending = new Set(
        current.actions.filter((action) => action.state === "pending").map((action) => action.actionId),
      );
      if (pending.has(bobThread.approvalId) && pending.has(bobThread.outputId)) return bobThread;
    }
    bobThread = await tenantThread(pai, host, bob, {
      title: "bob's thread",
      metadata: { owner: "bob" },
      text: "approve bob's task",
    });
    return bobThread;
  };

  return {
    engine,
    pai,
    host,
    a: { ...thread, fileId: file.fileId, messageIds: snapshot.messages.map((message) => message.messageId) },
    b,
    async close() {
      await host.close();
      await pai.close();
    },
  };
}
