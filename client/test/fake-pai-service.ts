import {
  type ActionRow,
  type JsonObject,
  type JsonValue,
  type LiveEvent,
  type MessageRow,
  PaiError,
  type PaiService,
  type RunRow,
  type StoredMessage,
  type StoredThreadEvents,
  type ThreadEvent,
  type ThreadSnapshot,
  type UploadedFile,
  type WatchEvent,
} from "@pai/core";
import { applyStoredEvents } from "@pai/core/protocol";

/**
 * A FAKE PaiService for transport and client tests. It is not the runtime: it scripts a tiny
 * agent by hand so the wire and the client can be tested before (and independently of) the
 * real runtime. Identity is `{ userId, scopeKey }`; scope isolation is enforced like the real
 * service (another scope's ids are NOT_FOUND).
 *
 * Script: a message starting with "approve" makes the assistant call `requestApproval`,
 * which suspends at `approval` (resume `{ approved: boolean }`); any other message gets the
 * reply "echo: <text>", streamed as live text deltas first. Every change is a committed
 * version with full-row events, exactly like the real service.
 */
export type FakeIdentity = { userId: string; scopeKey: string };

type ThreadEntry = {
  snapshot: ThreadSnapshot;
  log: StoredThreadEvents[];
  listeners: Set<(event: WatchEvent) => void>;
};

type StoredFile = { file: UploadedFile; body: Uint8Array };

export type FakePaiService = PaiService & {
  /** Committed versions of a thread (for assertions). */
  log(threadId: string): StoredThreadEvents[];
  /** Number of committed versions across all threads (to assert that rejected calls change nothing). */
  commitCount(): number;
};

const clock = () => new Date(Date.UTC(2026, 0, 1, 0, 0, 0, tick++)).toISOString();
let tick = 0;

function identityOf(value: unknown): FakeIdentity {
  const identity = value as Partial<FakeIdentity> | null;
  if (!identity || typeof identity.scopeKey !== "string" || typeof identity.userId !== "string") {
    throw new PaiError("FORBIDDEN", "No identity: sign in first.");
  }
  return identity as FakeIdentity;
}

function notFound(what: string, id: string): PaiError {
  return new PaiError("NOT_FOUND", `No ${what} ${id} in your scope. Check the id.`);
}

export function createFakePaiService(options: { presignFiles?: boolean } = {}): FakePaiService {
  const threads = new Map<string, ThreadEntry>();
  const files = new Map<string, StoredFile>();
  let ids = 0;
  let commits = 0;
  const nextId = (prefix: string) => `${prefix}_${++ids}`;

  const entryFor = (identity: unknown, threadId: string): ThreadEntry => {
    const { scopeKey } = identityOf(identity);
    const entry = threads.get(threadId);
    if (!entry || entry.snapshot.thread.scopeKey !== scopeKey) throw notFound("thread", threadId);
    return entry;
  };

  const commit = (entry: ThreadEntry, events: ThreadEvent[]) => {
    const stored: StoredThreadEvents = {
      threadId: entry.snapshot.thread.threadId,
      version: entry.snapshot.thread.version + 1,
      events,
      createdAt: clock(),
    };
    entry.snapshot = applyStoredEvents(entry.snapshot, stored);
    entry.log.push(stored);
    commits += 1;
    for (const listener of entry.listeners) listener({ type: "committed", ...stored });
  };

  const emitLive = (entry: ThreadEntry, event: LiveEvent) => {
    for (const listener of entry.listeners) {
      listener({ type: "live", threadId: entry.snapshot.thread.threadId, event });
    }
  };

  const threadEvent = (entry: ThreadEntry, patch: Partial<ThreadSnapshot["thread"]>): ThreadEvent => ({
    type: "thread-updated",
    thread: { ...entry.snapshot.thread, ...patch, updatedAt: clock() },
  });

  const messageRow = (entry: ThreadEntry, message: StoredMessage, runId: string | null): MessageRow => {
    const existing = entry.snapshot.messages.find((row) => row.messageId === message.id);
    const now = clock();
    return {
      threadId: entry.snapshot.thread.threadId,
      messageId: message.id,
      position: existing?.position ?? entry.snapshot.messages.length + 1,
      role: message.role,
      message,
      runId,
      createdAt: existing?.createdAt ?? now,
      updatedAt: now,
    };
  };

  const findAction = (entry: ThreadEntry, actionId: string): ActionRow => {
    const action = entry.snapshot.actions.find((row) => row.actionId === actionId);
    if (!action) throw notFound("action", actionId);
    return action;
  };

  const requirePending = (action: ActionRow) => {
    if (action.state !== "pending") {
      throw new PaiError(
        "CONFLICT",
        `Action ${action.actionId} was already ${action.state}. Refresh the thread.`,
      );
    }
  };

  const assistantOf = (entry: ThreadEntry, messageId: string): StoredMessage =>
    entry.snapshot.messages.find((row) => row.messageId === messageId)!.message;

  const runOf = (entry: ThreadEntry, runId: string): RunRow =>
    entry.snapshot.runs.find((row) => row.runId === runId)!;

  /** Settles the tool part of `action`, then finishes the run with a closing text. */
  const settle = (
    entry: ThreadEntry,
    action: ActionRow,
    resolved: ActionRow,
    part: Record<string, unknown>,
    closing: string,
  ) => {
    const message = assistantOf(entry, action.messageId);
    const parts = message.parts.map((existing) =>
      "toolCallId" in existing && existing.toolCallId === action.toolCallId
        ? ({ ...existing, ...part } as StoredMessage["parts"][number])
        : existing,
    );
    commit(entry, [
      { type: "action-upserted", action: resolved },
      { type: "message-upserted", message: messageRow(entry, { ...message, parts }, action.runId) },
    ]);
    const run = runOf(entry, action.runId);
    const after = assistantOf(entry, action.messageId);
    commit(entry, [
      {
        type: "message-upserted",
        message: messageRow(
          entry,
          { ...after, parts: [...after.parts, { type: "text", text: closing }] },
          action.runId,
        ),
      },
      { type: "run-upserted", run: { ...run, status: "completed", updatedAt: clock(), finishedAt: clock() } },
      threadEvent(entry, { status: "idle", activeRunId: null }),
    ]);
    return { action: resolved, version: entry.snapshot.thread.version };
  };

  const service: FakePaiService = {
    log: (threadId) => threads.get(threadId)?.log ?? [],
    commitCount: () => commits,

    async manifest(input) {
      identityOf(input.identity);
      return { agents: { main: { tools: ["requestApproval"] } } } satisfies JsonObject;
    },

    threads: {
      async create(input) {
        const { scopeKey, userId } = identityOf(input.identity);
        const threadId = nextId("thread");
        if (threads.has(threadId)) throw new PaiError("CONFLICT", `Thread ${threadId} already exists.`);
        const now = clock();
        const thread = {
          threadId,
          scopeKey,
          userKey: userId,
          agentId: input.agentId ?? "main",
          title: input.title ?? null,
          status: "idle" as const,
          version: 0,
          activeRunId: null,
          metadata: input.metadata ?? null,
          createdAt: now,
          updatedAt: now,
        };
        threads.set(threadId, {
          snapshot: { thread, messages: [], runs: [], actions: [], toolData: [] },
          log: [],
          listeners: new Set(),
        });
        return thread;
      },

      async list(input) {
        const { scopeKey } = identityOf(input.identity);
        const all = [...threads.values()]
          .map((entry) => entry.snapshot.thread)
          .filter((thread) => thread.scopeKey === scopeKey);
        const start = input.cursor ? Number(input.cursor) : 0;
        if (!Number.isInteger(start) || start < 0) throw new PaiError("INVALID_INPUT", "Unknown cursor.");
        const limit = input.limit ?? 50;
        const items = all.slice(start, start + limit);
        return { items, nextCursor: start + limit < all.length ? String(start + limit) : null };
      },

      async get(input) {
        return entryFor(input.identity, input.threadId).snapshot;
      },

      async send(input) {
        const entry = entryFor(input.identity, input.threadId);
        const pending = entry.snapshot.actions.filter((action) => action.state === "pending");
        if (pending.length > 0 && !input.cancelPending) {
          throw new PaiError(
            "CONFLICT",
            `Thread ${input.threadId} has pending actions (${pending.map((action) => action.name).join(", ")}). Answer them or send with cancelPending.`,
          );
        }
        const text =
          "text" in input.message
            ? input.message.text
            : input.message.parts.map((part) => (part.type === "text" ? part.text : "")).join("");
        const userId = input.message.id ?? nextId("msg");
        const runId = nextId("run");
        const assistantId = nextId("msg");
        const now = clock();
        const run: RunRow = {
          threadId: input.threadId,
          runId,
          status: "running",
          trigger: { type: "message", messageId: userId },
          step: 0,
          messageId: assistantId,
          clientTools: input.clientTools ?? [],
          clientData: input.clientData ?? null,
          error: null,
          createdAt: now,
          updatedAt: now,
          finishedAt: null,
        };
        commit(entry, [
          {
            type: "message-upserted",
            message: messageRow(entry, { id: userId, role: "user", parts: [{ type: "text", text }] }, null),
          },
          { type: "run-upserted", run },
          threadEvent(entry, { status: "running", activeRunId: runId }),
        ]);
        const result = { threadId: input.threadId, runId, version: entry.snapshot.thread.version };
        // The "model" answers asynchronously, like a real run after `send` returns.
        setTimeout(() => {
          if (text.startsWith("approve")) {
            const toolCallId = nextId("call");
            const actionId = nextId("action");
            const action: ActionRow = {
              threadId: input.threadId,
              actionId,
              scopeKey: entry.snapshot.thread.scopeKey,
              runId,
              messageId: assistantId,
              toolCallId,
              toolName: "requestApproval",
              kind: "suspend",
              suspendName: "approval",
              name: "requestApproval.approval",
              input: { prompt: text },
              state: "pending",
              episode: 1,
              createdAt: clock(),
              resolvedAt: null,
              resume: null,
              reason: null,
              idempotencyKey: null,
            };
            commit(entry, [
              {
                type: "message-upserted",
                message: messageRow(
                  entry,
                  {
                    id: assistantId,
                    role: "assistant",
                    parts: [
                      {
                        type: "tool-requestApproval",
                        toolCallId,
                        state: "input-available",
                        input: { summary: text },
                      },
                    ],
                  },
                  runId,
                ),
              },
              {
                type: "tool-data-upserted",
                item: {
                  threadId: input.threadId,
                  toolCallId,
                  channel: "progress",
                  itemId: "asked",
                  value: { step: "asked" },
                  updatedAt: clock(),
                },
              },
              { type: "action-upserted", action },
              { type: "run-upserted", run: { ...run, status: "waiting", step: 1, updatedAt: clock() } },
              threadEvent(entry, { status: "waiting" }),
            ]);
            return;
          }
          const reply = `echo: ${text}`;
          for (const delta of [reply.slice(0, 3), reply.slice(3)]) {
            emitLive(entry, {
              type: "text-delta",
              threadId: input.threadId,
              runId,
              messageId: assistantId,
              delta,
            });
          }
          commit(entry, [
            {
              type: "message-upserted",
              message: messageRow(
                entry,
                { id: assistantId, role: "assistant", parts: [{ type: "text", text: reply }] },
                runId,
              ),
            },
            {
              type: "run-upserted",
              run: { ...run, status: "completed", step: 1, updatedAt: clock(), finishedAt: clock() },
            },
            threadEvent(entry, { status: "idle", activeRunId: null }),
          ]);
        }, 5);
        return result;
      },

      async cancel(input) {
        const entry = entryFor(input.identity, input.threadId);
        const runId = entry.snapshot.thread.activeRunId;
        if (!runId) throw new PaiError("CONFLICT", `Thread ${input.threadId} has no active run to cancel.`);
        const now = clock();
        const errorText = `Cancelled: ${input.reason ?? "stopped by the user"}`;
        const events: ThreadEvent[] = [];
        for (const action of entry.snapshot.actions.filter((row) => row.state === "pending")) {
          events.push({
            type: "action-upserted",
            action: { ...action, state: "cancelled", resolvedAt: now, reason: input.reason ?? null },
          });
        }
        for (const row of entry.snapshot.messages.filter((message) => message.runId === runId)) {
          const parts = row.message.parts.map((part) =>
            "toolCallId" in part && part.state === "input-available"
              ? ({ ...part, state: "output-error", errorText } as StoredMessage["parts"][number])
              : part,
          );
          events.push({
            type: "message-upserted",
            message: { ...row, message: { ...row.message, parts }, updatedAt: now },
          });
        }
        events.push(
          {
            type: "run-upserted",
            run: { ...runOf(entry, runId), status: "cancelled", updatedAt: now, finishedAt: now },
          },
          threadEvent(entry, { status: "idle", activeRunId: null }),
        );
        commit(entry, events);
        return { version: entry.snapshot.thread.version };
      },

      watch(input) {
        const entry = entryFor(input.identity, input.threadId);
        const after = input.afterVersion ?? 0;
        return {
          async *[Symbol.asyncIterator]() {
            const queue: WatchEvent[] = [];
            let wake: (() => void) | null = null;
            const listener = (event: WatchEvent) => {
              queue.push(event);
              wake?.();
            };
            const abort = () => wake?.();
            entry.listeners.add(listener);
            input.signal?.addEventListener("abort", abort);
            try {
              for (const stored of entry.log)
                if (stored.version > after) yield { type: "committed", ...stored };
              const replayed = entry.snapshot.thread.version;
              while (!input.signal?.aborted) {
                if (queue.length === 0) {
                  await new Promise<void>((resolve) => {
                    wake = resolve;
                  });
                  wake = null;
                  continue;
                }
                const event = queue.shift()!;
                if (event.type === "committed" && event.version <= Math.max(after, replayed)) continue;
                yield event;
              }
            } finally {
              entry.listeners.delete(listener);
              input.signal?.removeEventListener("abort", abort);
            }
          },
        };
      },
    },

    actions: {
      async list(input) {
        const { scopeKey } = identityOf(input.identity);
        const items = [...threads.values()]
          .flatMap((entry) => entry.snapshot.actions)
          .filter((action) => action.scopeKey === scopeKey && (!input.state || action.state === input.state));
        return { items: items.slice(0, input.limit ?? 50), nextCursor: null };
      },

      async submit(input) {
        const entry = entryFor(input.identity, input.threadId);
        const action = findAction(entry, input.actionId);
        requirePending(action);
        const payload = input.payload as { approved?: unknown } | null;
        if (typeof payload !== "object" || payload === null || typeof payload.approved !== "boolean") {
          throw new PaiError(
            "INVALID_INPUT",
            `Invalid resume payload for ${action.name}: expected { approved: boolean }. Fix the payload and submit again.`,
            { issues: [{ message: "Expected boolean", path: ["approved"] }] },
          );
        }
        const resume: JsonValue = { approved: payload.approved };
        return settle(
          entry,
          action,
          { ...action, state: "submitted", resolvedAt: clock(), resume },
          { state: "output-available", output: resume },
          payload.approved ? "Approved, sending." : "Not sending.",
        );
      },

      async cancel(input) {
        const entry = entryFor(input.identity, input.threadId);
        const action = findAction(entry, input.actionId);
        requirePending(action);
        return settle(
          entry,
          action,
          { ...action, state: "cancelled", resolvedAt: clock(), reason: input.reason ?? null },
          { state: "output-error", errorText: `Cancelled: ${input.reason ?? "the wait was abandoned"}` },
          "The approval was cancelled.",
        );
      },

      async fail(input) {
        const entry = entryFor(input.identity, input.threadId);
        const action = findAction(entry, input.actionId);
        requirePending(action);
        const message = typeof input.error === "string" ? input.error : input.error.message;
        return settle(
          entry,
          action,
          { ...action, state: "failed", resolvedAt: clock(), reason: message },
          { state: "output-error", errorText: message },
          "The approval failed.",
        );
      },
    },

    files: {
      async upload(input) {
        const { scopeKey, userId } = identityOf(input.identity);
        if (input.threadId) entryFor(input.identity, input.threadId);
        if (!(input.body instanceof Uint8Array))
          throw new PaiError("INVALID_INPUT", "The fake takes byte bodies only.");
        const file: UploadedFile = {
          fileId: nextId("file"),
          scopeKey,
          userKey: userId,
          threadId: input.threadId ?? null,
          filename: input.filename,
          mediaType: input.mediaType,
          size: input.body.byteLength,
          metadata: input.metadata ?? null,
          createdAt: clock(),
        };
        files.set(file.fileId, { file, body: input.body.slice() });
        return file;
      },
      async head(input) {
        const { scopeKey } = identityOf(input.identity);
        const stored = files.get(input.fileId);
        if (!stored || stored.file.scopeKey !== scopeKey) throw notFound("file", input.fileId);
        return stored.file;
      },
      async get(input) {
        const file = await service.files.head(input);
        const body = files.get(file.fileId)!.body;
        return {
          ...file,
          body: new ReadableStream<Uint8Array>({
            start(controller) {
              controller.enqueue(body.slice());
              controller.close();
            },
          }),
          bytes: async () => body.slice(),
          text: async () => new TextDecoder().decode(body),
        };
      },
      ...(options.presignFiles
        ? {
            async downloadUrl(input: { identity: unknown; fileId: string }) {
              const file = await service.files.head(input);
              return `https://files.example.test/${file.fileId}?signature=fake`;
            },
          }
        : {}),
    },
  };
  return service;
}
