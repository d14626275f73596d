import { PaiError } from "../errors/pai-error.js";
import type { JsonObject } from "../json/json-value.js";
import type { Engine } from "../runtime/engine.js";
import type { ThreadSnapshot } from "../state/snapshot.js";
import type { Scope } from "./identity.js";
import type { PaiService } from "./service-types.js";
import { watchThread } from "./watch-thread.js";

const MAX_LIST_LIMIT = 200;

function clampLimit(limit: number | undefined, fallback = 50): number {
  if (limit === undefined) return fallback;
  if (!Number.isInteger(limit) || limit < 1) {
    throw new PaiError("INVALID_INPUT", `limit must be a positive integer (got ${limit}).`);
  }
  return Math.min(limit, MAX_LIST_LIMIT);
}

function requireString(value: unknown, name: string): string {
  if (typeof value !== "string" || value.length === 0 || value.length > 512) {
    throw new PaiError("INVALID_INPUT", `${name} must be a non-empty string of at most 512 characters.`);
  }
  return value;
}

/**
 * The transport-neutral service over an engine. Every call derives the trusted scope from
 * the caller's identity; a thread, action or file of another scope is NOT_FOUND, exactly
 * like a missing one.
 */
export function createService(
  engine: Engine,
  scopeOf: (identity: unknown) => Promise<Scope>,
  manifest?: (agentId: string) => Promise<JsonObject>,
): PaiService {
  const ownThread = async (
    identity: unknown,
    threadId: unknown,
    /**
     * `caller`: returned to the caller, so never an object the runtime keeps. `write`: only
     * used for a version-guarded change, so a kept snapshot may stand in for a read.
     */
    use: "check" | "caller" | "write" = "check",
  ): Promise<{ snapshot: ThreadSnapshot; scope: Scope }> => {
    const id = requireString(threadId, "threadId");
    const scope = await scopeOf(identity);
    const snapshot =
      use === "caller"
        ? await engine.store.read(id)
        : use === "write"
          ? await engine.store.loadForWrite(id)
          : await engine.store.load(id);
    if (!snapshot || snapshot.thread.scopeKey !== scope.scopeKey) {
      throw new PaiError("NOT_FOUND", `Thread ${id} was not found.`);
    }
    return { snapshot, scope };
  };

  const service: PaiService = {
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
      async create({ identity, agentId, title, metadata, threadId }) {
        const scope = await scopeOf(identity);
        const id = threadId === undefined ? engine.generateId() : requireString(threadId, "threadId");
        return engine.createThread({
          threadId: id,
          scope,
          agentId: agentId ?? engine.defaultAgentId(),
          title: title ?? null,
          metadata: metadata ?? null,
        });
      },
      async list({ identity, agentId, limit, cursor }) {
        const scope = await scopeOf(identity);
        const page = await engine.store.storage.listThreads({
          scopeKey: scope.scopeKey,
          ...(agentId ? { agentId } : {}),
          limit: clampLimit(limit),
          cursor: cursor ?? null,
        });
        return { items: page.threads, nextCursor: page.nextCursor };
      },
      async get({ identity, threadId }) {
        return (await ownThread(identity, threadId, "caller")).snapshot;
      },
      async send({ identity, threadId, message, cancelPending, clientTools, clientData }) {
        // Ownership and the agent never change, and the run starts in a version-guarded commit.
        const { snapshot, scope } = await ownThread(identity, threadId, "write");
        if (!message || typeof message !== "object") {
          throw new PaiError("INVALID_INPUT", "message must be { text } or { parts }.");
        }
        if ("text" in message) {
          if (typeof message.text !== "string" || message.text.trim().length === 0) {
            throw new PaiError("INVALID_INPUT", "message.text must be a non-empty string.");
          }
        } else if (!Array.isArray(message.parts) || message.parts.length === 0) {
          throw new PaiError(
            "INVALID_INPUT",
            "message.parts must be a non-empty array of text or file parts.",
          );
        }
        const tools = engine.validateClientTools(snapshot.thread.agentId, clientTools);
        const row = engine.userMessage(snapshot.thread.threadId, message as never);
        const result = await engine.startOrQueueRun({
          snapshot,
          threadId: snapshot.thread.threadId,
          identity,
          scope,
          message: row,
          trigger: { type: "message", messageId: row.messageId },
          clientTools: tools,
          clientData: (clientData ?? null) as never,
          queueIfBusy: false,
          cancelPending: cancelPending ?? false,
        });
        return { threadId: snapshot.thread.threadId, runId: result.runId, version: result.version };
      },
      async cancel({ identity, threadId, reason }) {
        const { snapshot } = await ownThread(identity, threadId);
        return engine.cancelRunOf(snapshot.thread.threadId, reason ?? null);
      },
      watch({ identity, threadId, afterVersion, signal }) {
        return watchThread(engine, () => ownThread(identity, threadId), afterVersion ?? 0, signal);
      },
    },

    actions: {
      async list({ identity, state, limit, cursor }) {
        const scope = await scopeOf(identity);
        const page = await engine.store.storage.listActions({
          scopeKey: scope.scopeKey,
          ...(state ? { state } : {}),
          limit: clampLimit(limit),
          cursor: cursor ?? null,
        });
        return { items: page.actions, nextCursor: page.nextCursor };
      },
      async submit({ identity, threadId, actionId, payload, idempotencyKey, clientTools, clientData }) {
        const { snapshot, scope } = await ownThread(identity, threadId);
        const tools = clientTools
          ? engine.validateClientTools(snapshot.thread.agentId, clientTools)
          : undefined;
        return engine.resolve({
          snapshot,
          threadId: snapshot.thread.threadId,
          actionId: requireString(actionId, "actionId"),
          identity,
          scope,
          kind: "submit",
          payload,
          idempotencyKey: idempotencyKey ?? null,
          ...(tools ? { clientTools: tools } : {}),
          ...(clientData !== undefined ? { clientData: clientData as never } : {}),
        });
      },
      async cancel({ identity, threadId, actionId, reason, idempotencyKey }) {
        const { snapshot, scope } = await ownThread(identity, threadId);
        return engine.resolve({
          snapshot,
          threadId: snapshot.thread.threadId,
          actionId: requireString(actionId, "actionId"),
          identity,
          scope,
          kind: "cancel",
          reason: reason ?? null,
          idempotencyKey: idempotencyKey ?? null,
        });
      },
      async fail({ identity, threadId, actionId, error, idempotencyKey }) {
        const { snapshot, scope } = await ownThread(identity, threadId);
        return engine.resolve({
          snapshot,
          threadId: snapshot.thread.threadId,
          actionId: requireString(actionId, "actionId"),
          identity,
          scope,
          kind: "fail",
          error,
          idempotencyKey: idempotencyKey ?? null,
        });
      },
    },

    files: {
      async upload({ identity, threadId, filename, mediaType, body, size, metadata }) {
        const scope = await scopeOf(identity);
        const files = engine.files;
        if (!files) throw new PaiError("NOT_FOUND", "This server has no file storage configured.");
        if (threadId) await ownThread(identity, threadId);
        return files.save({
          scopeKey: scope.scopeKey,
          userKey: scope.userKey ?? null,
          threadId: threadId ?? null,
          body,
          mediaType: requireString(mediaType, "mediaType"),
          filename: requireString(filename, "filename"),
          ...(size !== undefined ? { size } : {}),
          ...(metadata ? { metadata } : {}),
        });
      },
      async get({ identity, fileId }) {
        const scope = await scopeOf(identity);
        if (!engine.files) throw new PaiError("NOT_FOUND", `File ${fileId} was not found.`);
        return engine.files.read({ scopeKey: scope.scopeKey, fileId: requireString(fileId, "fileId") });
      },
      async head({ identity, fileId }) {
        const scope = await scopeOf(identity);
        if (!engine.files) throw new PaiError("NOT_FOUND", `File ${fileId} was not found.`);
        return engine.files.head({ scopeKey: scope.scopeKey, fileId: requireString(fileId, "fileId") });
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
  return service;
}
