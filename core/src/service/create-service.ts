import { PaiError } from "../errors/pai-error.js";
import { assertPlainKeys, type JsonObject } from "../json/json-value.js";
import type { ResolveRequest } from "../runtime/resolve-action.js";
import type { RuntimeCommands } from "../runtime/runtime-commands.js";
import type { CreateThreadInput } from "../runtime/runtime-core.js";
import type { ThreadSnapshot } from "../state/snapshot.js";
import { guardService } from "./guard-service.js";
import type { Scope } from "./identity.js";
import {
  checkMessage,
  clampLimit,
  cursorOf,
  failureOf,
  optionalText,
  requireId,
  requireMediaType,
  requireString,
  versionOf,
} from "./service-inputs.js";
import type { PaiService, WaitOption } from "./service-types.js";
import { waitOf, withSettled } from "./settle-run.js";
import { WatchSlots } from "./watch-slots.js";
import { watchThread } from "./watch-thread.js";

/**
 * The transport-neutral service over an engine. Every call derives the trusted scope from
 * the caller's identity; a thread, action or file of another scope is NOT_FOUND, exactly
 * like a missing one.
 */
export function createService<TIdentity, TAgent = unknown>(
  engine: RuntimeCommands,
  scopeOf: (identity: unknown) => Promise<Scope>,
  manifest?: (agentId: string) => Promise<JsonObject>,
  watches: WatchSlots = new WatchSlots(undefined),
): PaiService<TIdentity, TAgent> {
  const jsonObject = (value: unknown, name: string): JsonObject => {
    if (!value || typeof value !== "object" || Array.isArray(value)) {
      throw new PaiError("INVALID_INPUT", `${name} must be a JSON object.`);
    }
    return engine.json(value, name) as JsonObject;
  };
  const clientDataOf = (value: unknown) =>
    value === undefined ? undefined : engine.json(value, "clientData");
  const ownThread = async (
    identity: unknown,
    threadId: unknown,
    /**
     * `caller`: returned to the caller, so never an object the runtime keeps. `write`: only
     * used for a version-guarded change, so a kept snapshot may stand in for a read. `scope`:
     * only the thread's scope is checked, which never changes after creation (threads are not
     * deleted or moved), so a kept snapshot stands in too.
     */
    use: "check" | "caller" | "write" | "scope" = "check",
  ): Promise<{ snapshot: ThreadSnapshot; scope: Scope }> => {
    const id = requireId(threadId, "threadId");
    const scope = await scopeOf(identity);
    const snapshot =
      use === "caller"
        ? await engine.store.read(id)
        : use === "write" || use === "scope"
          ? await engine.store.loadForWrite(id)
          : await engine.store.load(id);
    if (!snapshot || snapshot.thread.scopeKey !== scope.scopeKey) {
      // A kept snapshot answers without a read, and an unknown id takes one: read anyway, so
      // another tenant's thread is refused as slowly as a thread that does not exist.
      if (snapshot && (use === "write" || use === "scope"))
        await engine.store.storage.loadThread({ threadId: id });
      throw new PaiError("NOT_FOUND", `Thread ${id} was not found.`);
    }
    return { snapshot, scope };
  };

  /**
   * Commits, then with `waitMs` waits for the run to stop. A wait holds one of the user's watch
   * slots, taken before anything is written: a wait refused for too many open ones leaves no
   * write behind that the caller's retry would repeat.
   */
  const commitAndSettle = async <T extends object>(
    scope: Scope,
    wait: { waitMs: number | undefined; signal: AbortSignal | undefined },
    commit: () => Promise<T>,
    runOf: (result: T) => { threadId: string; runId: string | null; version: number },
  ) => {
    const release = wait.waitMs === undefined ? undefined : watches.take(scope);
    try {
      const result = await commit();
      const run = runOf(result);
      try {
        return await withSettled(engine, result, run, wait.waitMs, wait.signal);
      } catch (error) {
        // The write is committed: failing the call now would have the client retry, and write
        // again. It answers without `settled`, as if it had not waited; the error is reported.
        engine.reportError({
          error,
          phase: "request",
          threadId: run.threadId,
          ...(run.runId ? { runId: run.runId } : {}),
        });
        return result;
      }
    } finally {
      release?.();
    }
  };

  /**
   * An answer to an action of a thread the caller owns (`owned`): it commits first; with `waitMs`
   * the call then waits for the action's run to stop. `answer` is what its kind adds.
   */
  const resolveAndSettle = (
    input: WaitOption & { identity: TIdentity; actionId: string; idempotencyKey?: string | undefined },
    owned: { snapshot: ThreadSnapshot; scope: Scope },
    answer: Pick<ResolveRequest, "kind" | "payload" | "reason" | "error" | "clientTools" | "clientData">,
  ) => {
    const { snapshot, scope } = owned;
    const { idempotencyKey } = input;
    const request: ResolveRequest = {
      snapshot,
      threadId: snapshot.thread.threadId,
      actionId: requireId(input.actionId, "actionId"),
      identity: input.identity,
      scope,
      idempotencyKey: idempotencyKey === undefined ? null : requireString(idempotencyKey, "idempotencyKey"),
      ...answer,
    };
    return commitAndSettle(
      scope,
      waitOf(input),
      () => engine.resolve(request),
      (result) => ({ threadId: request.threadId, runId: result.action.runId, version: result.version }),
    );
  };

  const service: PaiService<TIdentity, TAgent> = {
    async manifest({ identity, agentId }) {
      await scopeOf(identity);
      const id = agentId ?? engine.defaultAgentId();
      engine.agent(id);
      if (manifest) return manifest(id);
      const agent = engine.agent(id).definition;
      return {
        agentId: id,
        tools: Object.fromEntries(
          Object.keys(agent.tools)
            .sort()
            .map((name) => [
              name,
              { id: agent.tools[name]!.tool.id, hasExecute: Boolean(agent.tools[name]!.tool.execute) },
            ]),
        ),
      };
    },

    threads: {
      async create(input) {
        const { identity, agentId, title, metadata, message, clientTools, clientData } = input;
        const wait = waitOf(input);
        const scope = await scopeOf(identity);
        if ((input as { threadId?: unknown }).threadId !== undefined) {
          throw new PaiError(
            "INVALID_INPUT",
            "threads.create chooses the thread id itself; remove threadId. A server that needs its own ids uses pai.trusted.createThread.",
          );
        }
        const checkedTitle = optionalText(title, "title");
        const agent = agentId === undefined ? engine.defaultAgentId() : requireId(agentId, "agentId");
        const threadId = engine.generateId();
        let start: CreateThreadInput["start"];
        if (message !== undefined) {
          checkMessage(message);
          engine.json(message, "message");
          const data = clientDataOf(clientData);
          start = {
            identity,
            message: engine.userMessage(threadId, message as never),
            clientTools: engine.validateClientTools(agent, clientTools),
            clientData: (data ?? null) as never,
          };
        } else if (clientTools !== undefined || clientData !== undefined || wait.waitMs !== undefined) {
          throw new PaiError(
            "INVALID_INPUT",
            "threads.create takes clientTools, clientData and waitMs only with a first message: add message, or pass them to threads.send.",
          );
        }
        const checkedMetadata = metadata == null ? null : jsonObject(metadata, "metadata");
        return commitAndSettle(
          scope,
          wait,
          () =>
            engine.createThread({
              threadId,
              scope,
              agentId: agent,
              title: checkedTitle,
              metadata: checkedMetadata,
              ...(start ? { start } : {}),
            }),
          (row) => ({ threadId, runId: row.activeRunId, version: row.version }),
        );
      },
      async list({ identity, agentId, limit, cursor }) {
        const scope = await scopeOf(identity);
        const page = await engine.store.storage.listThreads({
          scopeKey: scope.scopeKey,
          ...(agentId ? { agentId } : {}),
          limit: clampLimit(limit),
          cursor: cursorOf(cursor),
        });
        return { items: page.threads, nextCursor: page.nextCursor };
      },
      async get({ identity, threadId }) {
        return (await ownThread(identity, threadId, "caller")).snapshot;
      },
      async send({ identity, threadId, message, cancelPending, clientTools, clientData, waitMs, signal }) {
        // Ownership and the agent never change, and the run starts in a version-guarded commit.
        const { snapshot, scope } = await ownThread(identity, threadId, "write");
        checkMessage(message);
        const wait = waitOf({ waitMs, signal });
        engine.json(message, "message");
        const data = clientDataOf(clientData);
        const tools = engine.validateClientTools(snapshot.thread.agentId, clientTools);
        const row = engine.userMessage(snapshot.thread.threadId, message as never);
        return commitAndSettle(
          scope,
          wait,
          async () => {
            const result = await engine.startOrQueueRun({
              snapshot,
              threadId: snapshot.thread.threadId,
              identity,
              scope,
              message: row,
              trigger: { type: "message", messageId: row.messageId },
              clientTools: tools,
              clientData: (data ?? null) as never,
              queueIfBusy: false,
              cancelPending: cancelPending ?? false,
            });
            return { threadId: snapshot.thread.threadId, runId: result.runId, version: result.version };
          },
          (sent) => sent,
        );
      },
      async cancel({ identity, threadId, reason }) {
        const { snapshot } = await ownThread(identity, threadId);
        return engine.cancelRunOf(snapshot.thread.threadId, optionalText(reason, "reason"));
      },
      watch({ identity, threadId, afterVersion, signal }) {
        // Checked on first iteration, like the thread's ownership; a slot is held until it ends.
        return (async function* () {
          const release = watches.take(await scopeOf(identity));
          try {
            yield* watchThread(
              engine,
              () => ownThread(identity, threadId, "scope"),
              versionOf(afterVersion),
              signal,
            );
          } finally {
            release();
          }
        })();
      },
    },

    actions: {
      async list({ identity, state, limit, cursor }) {
        const scope = await scopeOf(identity);
        const page = await engine.store.storage.listActions({
          scopeKey: scope.scopeKey,
          ...(state ? { state } : {}),
          limit: clampLimit(limit),
          cursor: cursorOf(cursor),
        });
        return { items: page.actions, nextCursor: page.nextCursor };
      },
      async submit(input) {
        const { identity, threadId, actionId, name, payload, clientTools, clientData } = input;
        // An answer commits against the thread's version: a kept snapshot stands in for a read
        // (resolveAction reads again before it reports an action it does not find).
        const owned = await ownThread(identity, threadId, "write");
        const { snapshot } = owned;
        if (name !== undefined) {
          const named = snapshot.actions.find((action) => action.actionId === actionId);
          if (named && named.name !== requireString(name, "name")) {
            throw new PaiError(
              "INVALID_INPUT",
              `Action ${actionId} is ${named.name}, not ${name}: its payload follows the schema of ${named.name}.`,
            );
          }
        }
        if (payload !== undefined) {
          assertPlainKeys(payload, "payload");
          engine.json(payload, "payload");
        }
        const data = clientDataOf(clientData);
        const tools = clientTools
          ? engine.validateClientTools(snapshot.thread.agentId, clientTools)
          : undefined;
        return resolveAndSettle(input, owned, {
          kind: "submit",
          payload,
          ...(tools ? { clientTools: tools } : {}),
          ...(data !== undefined ? { clientData: data as never } : {}),
        });
      },
      async cancel(input) {
        const owned = await ownThread(input.identity, input.threadId, "write");
        return resolveAndSettle(input, owned, {
          kind: "cancel",
          reason: optionalText(input.reason, "reason"),
        });
      },
      async fail(input) {
        const owned = await ownThread(input.identity, input.threadId, "write");
        return resolveAndSettle(input, owned, { kind: "fail", error: failureOf(input.error) });
      },
    },

    files: {
      async upload({ identity, threadId, filename, mediaType, body, size, metadata }) {
        const scope = await scopeOf(identity);
        const files = engine.files;
        if (!files) throw new PaiError("NOT_FOUND", "This server has no file storage configured.");
        if (threadId) await ownThread(identity, threadId, "scope");
        return files.save({
          scopeKey: scope.scopeKey,
          userKey: scope.userKey ?? null,
          threadId: threadId ?? null,
          body,
          mediaType: requireMediaType(mediaType),
          filename: requireString(filename, "filename"),
          ...(size !== undefined ? { size } : {}),
          ...(metadata ? { metadata: jsonObject(metadata, "metadata") } : {}),
        });
      },
      async get({ identity, fileId }) {
        const scope = await scopeOf(identity);
        if (!engine.files) throw new PaiError("NOT_FOUND", `File ${fileId} was not found.`);
        return engine.files.read({ scopeKey: scope.scopeKey, fileId: requireId(fileId, "fileId") });
      },
      async head({ identity, fileId }) {
        const scope = await scopeOf(identity);
        if (!engine.files) throw new PaiError("NOT_FOUND", `File ${fileId} was not found.`);
        return engine.files.head({ scopeKey: scope.scopeKey, fileId: requireId(fileId, "fileId") });
      },
      async downloadUrl({ identity, fileId, expiresInSeconds }) {
        const scope = await scopeOf(identity);
        const files = engine.files;
        if (!files) throw new PaiError("NOT_FOUND", `File ${fileId} was not found.`);
        await files.head({ scopeKey: scope.scopeKey, fileId });
        if (!files.getDownloadUrl) return null;
        return files.getDownloadUrl({
          scopeKey: scope.scopeKey,
          fileId,
          ...(expiresInSeconds !== undefined ? { expiresInSeconds } : {}),
        });
      },
    },
  };
  return guardService(
    service,
    (report) => engine.reportError(report),
    () => engine.generateId(),
  );
}
