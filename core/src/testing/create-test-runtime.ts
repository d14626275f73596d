import type { LanguageModel } from "ai";
import { PaiError } from "../errors/pai-error.js";
import type { AnyPaiPlugin } from "../plugins/plugin-types.js";
import type { StorageV1 } from "../ports/storage.js";
import { type AgentLike, createAgentRuntime, type Pai, scopeFromIdentity } from "../runtime/create-pai.js";
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
  /** Defaults to `memoryStorage()` from `@pai/storage-memory`. */
  storage?: StorageV1;
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
 * A runtime for tests: a scripted model, memory storage by default, and helpers that wait
 * for runs to settle so assertions see the committed state.
 */
export async function createTestRuntime<const TAgent extends AgentLike>(
  options: TestRuntimeOptions<TAgent>,
): Promise<TestRuntime<TAgent>> {
  const { agent, model: modelOption, storage: storageOption, identity: identityOption, ...rest } = options;
  const owned = storageOption ? null : await defaultStorage();
  const storage = storageOption ?? owned!.storage;
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
    close: async () => {
      await pai.close();
      // Engines the test runtime opened itself are closed with it (never a storage passed in).
      await owned?.dispose();
    },
  };
  return runtime;
}

/**
 * The storage a test runtime uses when none is given: memory, or the engine named by
 * `PAI_TEST_STORAGE` (`sqlite` or `pglite`, through `@pai/storage-kysely`), so the same
 * behaviour suites can run against a real SQL engine.
 */
async function defaultStorage(): Promise<{ storage: StorageV1; dispose: () => Promise<void> }> {
  const engine = (globalThis as { process?: { env?: Record<string, string | undefined> } }).process?.env
    ?.PAI_TEST_STORAGE;
  const load = async <T>(specifier: string): Promise<T> => (await import(/* @vite-ignore */ specifier)) as T;
  try {
    if (engine === "sqlite" || engine === "pglite") {
      type KyselyModule = {
        kyselyStorage: (options: { db: unknown }) => StorageV1;
        migrateToLatest: (db: unknown) => Promise<void>;
        createNodeSqliteDialect: (database: unknown) => unknown;
        createPgliteDialect: (database: unknown) => unknown;
      };
      const adapter = await load<KyselyModule>("@pai/storage-kysely");
      const { Kysely } = await load<{
        Kysely: new (config: { dialect: unknown }) => { destroy(): Promise<void> };
      }>("kysely");
      let dialect: unknown;
      if (engine === "sqlite") {
        const { DatabaseSync } = await load<{ DatabaseSync: new (path: string) => unknown }>("node:sqlite");
        dialect = adapter.createNodeSqliteDialect(new DatabaseSync(":memory:"));
      } else {
        const { PGlite } = await load<{ PGlite: new () => unknown }>("@electric-sql/pglite");
        dialect = adapter.createPgliteDialect(new PGlite());
      }
      const db = new Kysely({ dialect });
      await adapter.migrateToLatest(db);
      return { storage: adapter.kyselyStorage({ db }), dispose: () => db.destroy() };
    }
    const module = await load<{ memoryStorage: () => StorageV1 }>("@pai/storage-memory");
    return { storage: module.memoryStorage(), dispose: async () => undefined };
  } catch (error) {
    throw new PaiError(
      "INVALID_DEFINITION",
      engine
        ? `createTestRuntime could not open PAI_TEST_STORAGE=${engine} (needs @pai/storage-kysely and its driver): ${String(error)}`
        : "createTestRuntime uses @pai/storage-memory by default; install it or pass { storage }.",
      { cause: error },
    );
  }
}
