import { createPaiClient, isPaiToolPart, type PaiThreadState, type ThreadClient } from "@pai/client";
import { defineAgent, defineTool, PaiError } from "@pai/core";
import { toClientView } from "@pai/core/protocol";
import { scriptedModel } from "@pai/core/testing";
import { memoryFiles } from "@pai/storage-memory";
import { createTRPCUntypedClient, httpBatchLink, isTRPCClientError } from "@trpc/client";
import fc from "fast-check";
import superjson from "superjson";
import { afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { DEFAULT_PAI_ROUTER_LIMITS } from "../src/index.js";
import { createPaiSchemas } from "../src/schemas.js";
import { type HostUser, servedRuntimes, transportFor } from "./host-app.js";

// Acceptance tests of issue 7 against the real runtime (scripted model, memory storage),
// served by the example host app over a real HTTP server and reached with @trpc/client.

const alice: HostUser = { userId: "alice", scopeKey: "acme" };
const bob: HostUser = { userId: "bob", scopeKey: "acme" };
const mallory: HostUser = { userId: "mallory", scopeKey: "evil" };

const requestApproval = defineTool({
  id: "test.request-approval.v1",
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

/** A server-declared client-routed tool: no execute, so a client answers with the output. */
const getSelectedText = defineTool({
  id: "test.get-selected-text.v1",
  description: "Read the user's selection",
  inputSchema: z.object({}),
  outputSchema: z.object({ text: z.string() }),
});

const agent = defineAgent({ name: "main", tools: { requestApproval, getSelectedText } });

type PromptMessage = { role: string; content: unknown };

/** The scripted "model": "approve …" calls requestApproval, a tool result gets "Done.", anything else an echo. */
function script(call: { prompt: PromptMessage[] }) {
  const last = call.prompt.at(-1);
  if (last?.role === "tool") return { text: ["Do", "ne."] };
  const content = Array.isArray(last?.content)
    ? (last.content as Array<{ type: string; text?: string }>)
    : [];
  const text = content.map((part) => part.text ?? "").join("");
  if (text.startsWith("approve"))
    return { toolCalls: [{ toolName: "requestApproval", input: { summary: text } }] };
  if (text.startsWith("select")) return { toolCalls: [{ toolName: "getSelectedText", input: {} }] };
  return { text: ["echo: ", text] };
}

const served = servedRuntimes();
afterEach(() => served.closeAll());

function start() {
  return served.start({
    agent,
    model: scriptedModel((call) => script(call as unknown as { prompt: PromptMessage[] }) as never),
    files: memoryFiles(),
  });
}

function waitFor(thread: ThreadClient, predicate: (state: PaiThreadState) => boolean, ms = 45_000) {
  return new Promise<PaiThreadState>((resolve, reject) => {
    if (predicate(thread.getState())) return resolve(thread.getState());
    const timer = setTimeout(() => {
      stop();
      reject(new Error(`Timed out; state: ${JSON.stringify(thread.getState()).slice(0, 2000)}`));
    }, ms);
    const stop = thread.subscribe(() => {
      if (!predicate(thread.getState())) return;
      clearTimeout(timer);
      stop();
      resolve(thread.getState());
    });
  });
}

/** Polls (without watching) until the run that `send` started waits on its pending action. */
async function pendingAfterSend(thread: ThreadClient) {
  for (let attempt = 0; attempt < 200; attempt++) {
    const state = await thread.refresh();
    if (state.pending.length > 0) return state.pending[0];
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  throw new Error("The run never suspended.");
}

async function rejection(promise: Promise<unknown>): Promise<PaiError> {
  const error = await promise.then(
    () => {
      throw new Error("expected a rejection");
    },
    (caught: unknown) => caught,
  );
  if (!PaiError.isInstance(error)) throw error;
  return error;
}

describe("transport-trpc with the real runtime", () => {
  it("live equals reload: over random flows a watcher's state equals a fresh getState() after every step", async () => {
    const { host, runtime, service } = await start();
    const command = fc.constantFrom(
      "send-approve",
      "send-select",
      "send-text",
      "send-cancel-pending",
      "submit-yes",
      "submit-no",
      "submit-invalid",
      "answer-client-tool",
      "cancel-action",
      "fail-action",
      "cancel-run",
    );
    const succeeded = new Set<string>();
    await fc.assert(
      fc.asyncProperty(fc.array(command, { minLength: 1, maxLength: 6 }), async (commands) => {
        const watcher = createPaiClient({ transport: transportFor(host.url, alice) });
        const actor = createPaiClient({ transport: transportFor(host.url, bob) });
        const thread = await actor.createThread();
        const watched = watcher.thread(thread.id);
        const stop = watched.watch({ retryDelayMs: 20 });
        try {
          await waitFor(watched, (state) => state.connection === "open");
          for (const name of commands) {
            const { pending } = await thread.refresh();
            const first = pending[0];
            const output = pending.find((item) => item.name.endsWith(".output"));
            const suspension = pending.find((item) => !item.name.endsWith(".output"));
            const attempt = async () => {
              switch (name) {
                case "send-approve":
                  return thread.send("approve it");
                case "send-select":
                  return thread.send("select something");
                case "send-text":
                  return thread.send("hello");
                case "send-cancel-pending":
                  return thread.send("approve again", { cancelPending: true });
                case "submit-yes":
                  return suspension?.submit({ approved: true });
                case "submit-no":
                  return suspension?.submit({ approved: false });
                case "submit-invalid":
                  return first?.submit({ approved: "maybe" });
                case "answer-client-tool":
                  return output?.submit({ text: "selected words" });
                case "cancel-action":
                  return first?.cancel({ reason: "not needed" });
                case "fail-action":
                  return first?.fail("the approver is away");
                case "cancel-run":
                  return thread.cancel("stop");
              }
            };
            // Rejections (pending work, nothing to cancel, invalid payloads) are part of the flow.
            const result = await attempt().catch((error: unknown) => {
              if (!PaiError.isInstance(error) || error.code === "INTERNAL") throw error;
              return undefined;
            });
            if (result !== undefined) succeeded.add(name);
            await runtime.pai.waitForIdle(thread.id);
            // What a client may see of a fresh read: the view of the rows without internal fields.
            const fresh = toClientView(await service.threads.get({ identity: alice, threadId: thread.id }));
            const live = await waitFor(watched, (state) => state.version >= fresh.version);
            expect(live.version).toBe(fresh.version);
            expect(live.messages).toEqual(fresh.messages);
            expect(live.run).toEqual(fresh.run);
            const plain = (
              items: ReadonlyArray<{ name: string; input: unknown; origin: unknown; ref: unknown }>,
            ) => items.map(({ name: action, input, origin, ref }) => ({ action, input, origin, ref }));
            expect(plain(live.pending)).toEqual(plain(fresh.pending));
          }
        } finally {
          stop();
        }
      }),
      {
        numRuns: 12,
        // One hand-picked flow first, so every kind of outcome is covered on every run.
        examples: [
          [
            [
              "send-approve",
              "submit-invalid",
              "submit-yes",
              "send-select",
              "answer-client-tool",
              "send-approve",
              "cancel-action",
              "send-approve",
              "fail-action",
              "send-approve",
              "cancel-run",
              "send-select",
              "send-cancel-pending",
              "submit-no",
            ],
          ],
        ],
      },
    );
    expect([...succeeded].sort()).toEqual(
      expect.arrayContaining([
        "answer-client-tool",
        "cancel-action",
        "cancel-run",
        "fail-action",
        "send-approve",
        "send-cancel-pending",
        "send-select",
        "submit-no",
        "submit-yes",
      ]),
    );
  });

  it("send -> tool suspends -> a second client sees the pending action via watch -> submits -> the first sees output and final text", async () => {
    const { host, service } = await start();
    const first = createPaiClient({ transport: transportFor(host.url, alice) });
    const second = createPaiClient({ transport: transportFor(host.url, bob) });
    const thread = await first.createThread({ title: "launch" });
    const stopFirst = thread.watch();
    const other = second.thread(thread.id);
    const stopSecond = other.watch();
    await waitFor(other, (state) => state.connection === "open");

    await thread.send("approve the launch");
    const waiting = await waitFor(other, (state) => state.pending.length === 1);
    const [action] = waiting.pending;
    expect(action).toMatchObject({
      name: "requestApproval.approval",
      input: { prompt: "approve the launch" },
      origin: { kind: "tool", toolName: "requestApproval", suspendName: "approval" },
    });
    const message = waiting.messages.find((item) => item.id === action.origin.messageId)!;
    const part = message.parts.find(isPaiToolPart)!;
    expect(part.state).toBe("input-available");
    expect(part.pendingSuspension?.actionId).toBe(action.ref.actionId);
    expect(part.data.progress?.map((item) => item.value)).toEqual([{ step: "asked" }]);
    expect(other.getPendingAction(message, part)?.ref).toEqual(action.ref);

    await action.submit({ approved: true });
    const done = await waitFor(
      thread,
      (state) => state.run?.status === "completed" && state.pending.length === 0,
    );
    const settled = done.messages.flatMap((item) => item.parts).find(isPaiToolPart)!;
    expect(settled).toMatchObject({
      state: "output-available",
      output: { approved: true },
      cancelled: false,
    });
    expect(settled.suspensions.map((item) => item.state)).toEqual(["submitted"]);
    const lastText = done.messages
      .at(-1)
      ?.parts.filter((item) => item.type === "text")
      .at(-1);
    expect(lastText).toMatchObject({ type: "text", text: "Done." });

    // Live equals reload, for both watchers.
    const fresh = toClientView(await service.threads.get({ identity: alice, threadId: thread.id }));
    expect(done.messages).toEqual(fresh.messages);
    expect(done.version).toBe(fresh.version);
    const otherDone = await waitFor(other, (state) => state.version === fresh.version);
    expect(otherDone.messages).toEqual(fresh.messages);
    stopFirst();
    stopSecond();
  });

  it("reconnect: the SSE stream is cut mid-run; the client resumes and ends with the same state as an uninterrupted watcher", async () => {
    const { host, service } = await start();
    const steady = createPaiClient({ transport: transportFor(host.url, alice) });
    const flaky = createPaiClient({ transport: transportFor(host.url, bob) });
    const thread = await steady.createThread();
    const flakyThread = flaky.thread(thread.id);
    const stops = [thread.watch(), flakyThread.watch({ retryDelayMs: 20 })];
    await waitFor(flakyThread, (state) => state.connection === "open");
    await thread.send("approve one");
    const waiting = await waitFor(flakyThread, (state) => state.pending.length === 1);
    host.cutConnections();
    await waiting.pending[0].submit({ approved: false });
    const expected = await waitFor(thread, (state) => state.run?.status === "completed");
    const resumed = await waitFor(flakyThread, (state) => state.version === expected.version);
    expect(resumed.messages).toEqual(expected.messages);
    expect(resumed.run).toEqual(expected.run);
    const fresh = toClientView(await service.threads.get({ identity: alice, threadId: thread.id }));
    expect(resumed.messages).toEqual(fresh.messages);
    for (const stop of stops) stop();
  });

  it("isolation: every procedure called with another scope's thread, action or file id is NOT_FOUND", async () => {
    const { host, service } = await start();
    const owner = createPaiClient({ transport: transportFor(host.url, alice) });
    const intruder = createPaiClient({ transport: transportFor(host.url, mallory) }).transport;
    const thread = await owner.createThread();
    await thread.send("approve secret");
    const actionId = (await pendingAfterSend(thread)).ref.actionId;
    const file = await owner.files.upload({
      filename: "a.txt",
      mediaType: "text/plain",
      file: new Uint8Array([1, 2]),
    });
    const before = await service.threads.get({ identity: alice, threadId: thread.id });
    const threadId = thread.id;

    const attempts: Array<[string, () => Promise<unknown>]> = [
      ["threads.get", () => intruder.threads.get({ threadId })],
      [
        "threads.send",
        () => intruder.threads.send({ threadId, message: { text: "hi" }, cancelPending: true }),
      ],
      ["threads.cancel", () => intruder.threads.cancel({ threadId })],
      ["actions.submit", () => intruder.actions.submit({ threadId, actionId, payload: { approved: true } })],
      ["actions.cancel", () => intruder.actions.cancel({ threadId, actionId })],
      ["actions.fail", () => intruder.actions.fail({ threadId, actionId, error: "no" })],
      ["files.get", () => intruder.files.get({ fileId: file.fileId })],
      [
        "threads.watch",
        async () => {
          for await (const _event of intruder.threads.watch({ threadId })) return;
        },
      ],
    ];
    for (const [name, attempt] of attempts) {
      const error = await rejection(attempt());
      expect([name, error.code]).toEqual([name, "NOT_FOUND"]);
    }
    expect((await intruder.actions.list({ state: "pending" })).items).toEqual([]);
    expect((await intruder.threads.list()).items).toEqual([]);
    expect(await service.threads.get({ identity: alice, threadId })).toEqual(before);
  });

  it("fuzz: any input to any procedure yields only typed 4xx errors, never a 500, and changes nothing", async () => {
    const { host, service } = await start();
    const owner = createPaiClient({ transport: transportFor(host.url, alice) });
    const thread = await owner.createThread();
    await thread.send("approve fuzz");
    const actionId = (await pendingAfterSend(thread)).ref.actionId;
    const threadId = thread.id;
    const before = await service.threads.get({ identity: alice, threadId });
    const threadsBefore = await service.threads.list({ identity: alice });

    const raw = createTRPCUntypedClient({
      links: [
        httpBatchLink({
          url: host.url,
          transformer: superjson,
          headers: { authorization: `Bearer ${alice.userId}:${alice.scopeKey}` },
        }),
      ],
    });
    const procedures = {
      "pai.manifest": "query",
      "pai.threads.create": "mutation",
      "pai.threads.list": "query",
      "pai.threads.get": "query",
      "pai.threads.send": "mutation",
      "pai.threads.cancel": "mutation",
      "pai.actions.list": "query",
      "pai.actions.submit": "mutation",
      "pai.actions.cancel": "mutation",
      "pai.actions.fail": "mutation",
      "pai.files.upload": "mutation",
      "pai.files.get": "query",
    } as const;
    // Random values, and near-valid objects that reuse the real ids with random other fields.
    const noise = fc.oneof(
      // superjson (the host's transformer) refuses these keys on the client before any request is made.
      fc.anything({
        maxDepth: 3,
        key: fc.string().filter((key) => !["__proto__", "prototype", "constructor"].includes(key)),
      }),
      fc.string(),
      fc.constant(undefined),
      fc.constant(null),
      fc.integer(),
    );
    const input = fc.oneof(
      noise,
      fc.record(
        {
          threadId: fc.oneof(fc.constant(threadId), noise),
          actionId: fc.oneof(fc.constant(actionId), noise),
          fileId: noise,
          payload: noise,
          message: fc.oneof(noise, fc.record({ text: noise }), fc.record({ parts: noise })),
          error: noise,
          reason: noise,
          limit: noise,
          cursor: noise,
          title: noise,
          metadata: noise,
          body: noise,
          filename: noise,
          mediaType: noise,
        },
        { requiredKeys: [] },
      ),
    );
    const statuses: number[] = [];
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...Object.keys(procedures)), input, async (path, value) => {
        const kind = procedures[path as keyof typeof procedures];
        // Valid requests with legitimate effects (creating, cancelling, answering) are not what this test is about.
        if (hasLegitimateEffect(path, value, { threadId, actionId })) return;
        try {
          if (kind === "query") await raw.query(path, value);
          else await raw.mutation(path, value);
        } catch (error) {
          if (!isTRPCClientError(error)) throw error;
          const status = (error.data as { httpStatus?: number } | undefined)?.httpStatus ?? 0;
          statuses.push(status);
          expect(status, `${path} ${JSON.stringify(value)} -> ${error.message}`).toBeGreaterThanOrEqual(400);
          expect(status, `${path} ${JSON.stringify(value)} -> ${error.message}`).toBeLessThan(500);
        }
      }),
      { numRuns: 300 },
    );
    expect(statuses.length).toBeGreaterThan(100);
    expect(await service.threads.get({ identity: alice, threadId })).toEqual(before);
    expect(await service.threads.list({ identity: alice })).toEqual(threadsBefore);
  });
});

const schemas = createPaiSchemas(DEFAULT_PAI_ROUTER_LIMITS);

function hasLegitimateEffect(
  path: string,
  value: unknown,
  ids: { threadId: string; actionId: string },
): boolean {
  const input = value as { threadId?: unknown; actionId?: unknown; payload?: unknown } | null;
  const targets = input?.threadId === ids.threadId;
  const targetsAction = targets && input?.actionId === ids.actionId;
  switch (path) {
    case "pai.threads.create":
      return schemas.threads.create.safeParse(value).success;
    case "pai.files.upload":
      return schemas.files.upload.safeParse(value).success;
    case "pai.threads.cancel":
      return targets && schemas.threads.cancel.safeParse(value).success;
    case "pai.threads.send":
      return (
        targets &&
        schemas.threads.send.safeParse(value).success &&
        (value as { cancelPending?: unknown }).cancelPending === true
      );
    case "pai.actions.cancel":
      return targetsAction && schemas.actions.cancel.safeParse(value).success;
    case "pai.actions.fail":
      return targetsAction && schemas.actions.fail.safeParse(value).success;
    case "pai.actions.submit":
      return (
        targetsAction &&
        schemas.actions.submit.safeParse(value).success &&
        typeof (input?.payload as { approved?: unknown } | null)?.approved === "boolean"
      );
    default:
      return false;
  }
}
