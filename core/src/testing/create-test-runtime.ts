import type { LanguageModel } from "ai";
import { PaiError } from "../errors/pai-error.js";
import { type AgentLike, createAgentRuntime, type Pai, scopeFromIdentity } from "../pai/create-pai.js";
import type { AnyPaiPlugin } from "../plugins/plugin-types.js";
import type { StorageV1 } from "../ports/storage.js";
import type { RuntimeOptions, ScopeResolver } from "../runtime/runtime-options.js";
import type { OutgoingMessage, RunRequestOptions } from "../service/service-types.js";
import type { ActionRow, MessageRow, RunRow } from "../state/rows.js";
import type { ThreadSnapshot } from "../state/snapshot.js";
import { type ScriptedStep, scriptedModel } from "./scripted-model.js";

export type TestRuntimeOptions<TAgent extends AgentLike> = Omit<RuntimeOptions, "storage" | "model"> & {
  /** Derives the scope from the identity. Default: the identity's own `scopeKey` / `userKey`. */
  scope?: ScopeResolver<any>;
  agent: TAgent;
  /** A model, or a script for `scriptedModel`. */
  model: LanguageModel | ScriptedStep[];
  /**
   * Required, so core loads no adapter on its own: `memoryStorage()` from `@pai/storage-memory`
   * for most tests, or any `StorageV1` to run the same test on a real engine. Never closed by
   * `close()`: whoever opened it closes it.
   */
  storage: StorageV1;
  /** Identity used by the helpers. Default `{ scopeKey: "test-scope", userKey: "test-user" }`. */
  identity?: unknown;
};

export type TestRuntime<TAgent extends AgentLike> = {
  pai: Pai<Record<string, TAgent>>;
  storage: StorageV1;
  model: LanguageModel;
  identity: unknown;
  /** Creates a thread and returns its id. */
  createThread(options?: { threadId?: string; title?: string }): Promise<string>;
  /** Sends a message and waits until the run finished, failed or waits on pending actions. */
  send(
    threadId: string,
    message: string | OutgoingMessage,
    options?: RunRequestOptions & { cancelPending?: boolean },
  ): Promise<ThreadSnapshot>;
  /** The thread's stored rows. */
  snapshot(threadId: string): Promise<ThreadSnapshot>;
  /** Pending actions of the thread, oldest first. */
  pending(threadId: string): Promise<ActionRow[]>;
  /** Finds one pending action by its qualified name (`tool.suspendName` / `tool.output`). */
  action(threadId: string, name: string): Promise<ActionRow>;
  submit(
    threadId: string,
    actionIdOrName: string,
    payload: unknown,
    options?: { idempotencyKey?: string },
  ): Promise<ThreadSnapshot>;
  cancel(threadId: string, actionIdOrName: string, reason?: string): Promise<ThreadSnapshot>;
  fail(threadId: string, actionIdOrName: string, error: string): Promise<ThreadSnapshot>;
  /** The latest run of the thread. */
  lastRun(threadId: string): Promise<RunRow | undefined>;
  /** The last assistant message's text. */
  lastText(threadId: string): Promise<string>;
  /** Tool parts of all messages, flattened, in order. */
  toolParts(threadId: string): Promise<Array<Record<string, any>>>;
  waitForIdle(threadId: string): Promise<void>;
  close(): Promise<void>;
};

/**
 * A runtime for tests: a scripted model, the storage you pass, and helpers that wait for runs
 * to settle so assertions see the committed state.
 */
export async function createTestRuntime<const TAgent extends AgentLike>(
  options: TestRuntimeOptions<TAgent>,
): Promise<TestRuntime<TAgent>> {
  const { agent, model: modelOption, storage, identity: identityOption, ...rest } = options;
  const model = Array.isArray(modelOption) ? scriptedModel(modelOption) : modelOption;
  // Sequential ids with a per-runtime prefix: readable in assertions, unique across runtimes sharing storage.
  const prefix = globalThis.crypto.randomUUID().slice(0, 6);
  let counter = 0;
  const pai = createAgentRuntime<TAgent, readonly AnyPaiPlugin[], any>({
    agent,
    storage,
    model,
    generateId: rest.generateId ?? (() => `${prefix}-${++counter}`),
    scope: scopeFromIdentity,
    ...rest,
  }) as unknown as Pai<Record<string, TAgent>>;
  const identity = identityOption ?? { scopeKey: "test-scope", userKey: "test-user" };
  const service = pai.service;

  const resolveActionId = async (threadId: string, idOrName: string): Promise<string> => {
    const snapshot = await service.threads.get({ identity, threadId });
    const byId = snapshot.actions.find((action) => action.actionId === idOrName);
    if (byId) return byId.actionId;
    const byName = snapshot.actions.filter(
      (action) => action.name === idOrName && action.state === "pending",
    );
    if (byName.length === 0) {
      throw new PaiError("NOT_FOUND", `No pending action named ${idOrName} in thread ${threadId}.`);
    }
    return byName[0]!.actionId;
  };
  const settle = async (threadId: string) => {
    await pai.waitForIdle(threadId);
    return service.threads.get({ identity, threadId });
  };

  const runtime: TestRuntime<TAgent> = {
    pai,
    storage,
    model,
    identity,
    async createThread(threadOptions = {}) {
      if (threadOptions.threadId) {
        // A chosen id is a trusted, server-side choice; the public service picks its own.
        const scope = await (rest.scope ?? scopeFromIdentity)(identity as never);
        const thread = await pai.trusted.createThread({
          scope,
          threadId: threadOptions.threadId,
          ...(threadOptions.title ? { title: threadOptions.title } : {}),
        });
        return thread.threadId;
      }
      const thread = await service.threads.create({
        identity,
        ...(threadOptions.title ? { title: threadOptions.title } : {}),
      });
      return thread.threadId;
    },
    async send(threadId, message, sendOptions = {}) {
      await service.threads.send({
        identity,
        threadId,
        message: typeof message === "string" ? { text: message } : message,
        ...sendOptions,
      });
      return settle(threadId);
    },
    snapshot: (threadId) => service.threads.get({ identity, threadId }),
    async pending(threadId) {
      const snapshot = await service.threads.get({ identity, threadId });
      return snapshot.actions.filter((action) => action.state === "pending");
    },
    async action(threadId, name) {
      const pending = await runtime.pending(threadId);
      const found = pending.find((action) => action.name === name);
      if (!found) {
        throw new Error(
          `No pending action ${name}; pending: ${pending.map((action) => action.name).join(", ") || "none"}`,
        );
      }
      return found;
    },
    async submit(threadId, idOrName, payload, submitOptions = {}) {
      await service.actions.submit({
        identity,
        threadId,
        actionId: await resolveActionId(threadId, idOrName),
        payload,
        ...submitOptions,
      });
      return settle(threadId);
    },
    async cancel(threadId, idOrName, reason) {
      await service.actions.cancel({
        identity,
        threadId,
        actionId: await resolveActionId(threadId, idOrName),
        ...(reason ? { reason } : {}),
      });
      return settle(threadId);
    },
    async fail(threadId, idOrName, error) {
      await service.actions.fail({
        identity,
        threadId,
        actionId: await resolveActionId(threadId, idOrName),
        error,
      });
      return settle(threadId);
    },
    async lastRun(threadId) {
      return (await service.threads.get({ identity, threadId })).runs.at(-1);
    },
    async lastText(threadId) {
      const snapshot = await service.threads.get({ identity, threadId });
      const last = [...snapshot.messages]
        .reverse()
        .find((message: MessageRow) => message.role === "assistant");
      if (!last) return "";
      const parts = last.message.parts as Array<{ type: string; text?: string }>;
      const lastStart = parts.map((part) => part.type).lastIndexOf("step-start");
      return parts
        .slice(lastStart + 1)
        .filter((part) => part.type === "text")
        .map((part) => part.text)
        .join("");
    },
    async toolParts(threadId) {
      const snapshot = await service.threads.get({ identity, threadId });
      return snapshot.messages.flatMap((message) =>
        (message.message.parts as Array<Record<string, any>>).filter(
          (part) => part.type === "dynamic-tool" || String(part.type).startsWith("tool-"),
        ),
      );
    },
    waitForIdle: (threadId) => pai.waitForIdle(threadId),
    close: () => pai.close(),
  };
  return runtime;
}
