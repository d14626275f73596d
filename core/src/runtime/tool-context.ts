import { validateSchema } from "../definitions/schema.js";
import { PaiError } from "../errors/pai-error.js";
import { assertPlainKeys } from "../json/json-value.js";
import type { SaveFileInput } from "../ports/files.js";
import { decideToolData } from "../state/deciders/call-deciders.js";
import type { ToolDataRow } from "../state/rows.js";
import type { RuntimeScope, RuntimeToolRegistration } from "./definition-shapes.js";
import type { RequestContext } from "./request-context.js";
import type { RuntimeCore } from "./runtime-core.js";
import { resolveEnabled } from "./tool-invoker.js";

/**
 * The parts of a tool's `ctx` that reach outside the call: durable tool data (written through
 * the runtime's one writer, fenced by the run's lease like every driver write), the scope's
 * files, and `ctx.agents` (running another agent on a child thread).
 */

export function toolDataWriter(
  rt: RuntimeCore,
  call: {
    registration: RuntimeToolRegistration;
    threadId: string;
    runId: string;
    toolCallId: string;
    request: RequestContext;
  },
) {
  const { registration, threadId, runId, toolCallId, request } = call;
  const schemas = registration.tool.config.dataSchemas ?? {};
  return {
    write: async (channel: string, value: unknown, options: { id?: string; transient?: boolean } = {}) => {
      const schema = schemas[channel];
      if (!schema) {
        throw new PaiError(
          "INVALID_INPUT",
          `Tool data channel "${channel}" is not declared. Declared channels: ${Object.keys(schemas).join(", ") || "none"}.`,
        );
      }
      assertPlainKeys(value, `Tool data "${channel}"`, rt.options.jsonLimits);
      const parsed = await validateSchema(schema, value);
      if (!parsed.success) {
        throw new PaiError("INVALID_INPUT", `Tool data for "${channel}" is invalid: ${parsed.message}`, {
          issues: parsed.issues,
        });
      }
      if (!(await resolveEnabled(registration, await request.resolverArgs()))) {
        throw new PaiError("TOOL_DISABLED", "This tool was disabled; it can no longer write tool data.");
      }
      const item: ToolDataRow = {
        threadId,
        toolCallId,
        channel,
        itemId: options.id ?? rt.generateId(),
        value: rt.json(parsed.value, `Tool data "${channel}"`),
        updatedAt: rt.now(),
      };
      if (options.transient) {
        await rt.notifier.publish({ type: "live", threadId, event: { type: "tool-data-transient", item } });
        return;
      }
      await rt.writer.commit(threadId, (state) => decideToolData(state, { runId, item }), { fence: runId });
    },
    list: async (channel: string) => {
      const snapshot = await rt.store.snapshot(threadId);
      return snapshot.toolData
        .filter((item) => item.toolCallId === toolCallId && item.channel === channel)
        .map((item) => ({ id: item.itemId, value: item.value, updatedAt: item.updatedAt }));
    },
  };
}

export function scopedFiles(rt: RuntimeCore, scope: RuntimeScope, threadId: string, signal: AbortSignal) {
  const files = rt.files;
  const missing = () =>
    new PaiError(
      "INVALID_DEFINITION",
      "No files provider is configured. Pass createAgentRuntime({ files }).",
    );
  return {
    save: async (input: Pick<SaveFileInput, "body" | "mediaType" | "filename" | "metadata">) => {
      if (!files) throw missing();
      return files.save({
        body: input.body,
        mediaType: input.mediaType,
        filename: input.filename,
        ...(input.metadata ? { metadata: input.metadata } : {}),
        scopeKey: scope.scopeKey,
        userKey: scope.userKey ?? null,
        threadId,
        signal,
      });
    },
    read: async (input: { fileId: string }) => {
      if (!files) throw missing();
      return files.read({ scopeKey: scope.scopeKey, fileId: input.fileId, signal });
    },
  };
}

export function agentRunner(rt: RuntimeCore, request: RequestContext, parentThreadId: string) {
  return {
    /**
     * Runs another registered agent on a fresh thread of the same scope and waits for it.
     * Cancelling the parent run cancels the child run.
     */
    run: async (input: { agentId: string; prompt: string; threadId?: string; signal?: AbortSignal }) => {
      if (!input || typeof input.agentId !== "string" || typeof input.prompt !== "string") {
        throw new PaiError("INVALID_INPUT", "ctx.agents.run needs { agentId, prompt }.");
      }
      const agentId = input.agentId;
      rt.agent(agentId);
      let threadId = input.threadId;
      if (threadId) {
        const existing = await rt.store.load(threadId);
        if (
          !existing ||
          existing.thread.scopeKey !== request.scope.scopeKey ||
          existing.thread.agentId !== agentId
        ) {
          throw new PaiError("NOT_FOUND", `Thread ${threadId} of agent "${agentId}" was not found.`);
        }
      } else {
        threadId = rt.generateId();
        await rt.createThread({
          threadId,
          scope: request.scope,
          agentId,
          title: null,
          metadata: { parentThreadId },
        });
      }
      const childThreadId = threadId;
      const sent = await rt.startOrQueueRun({
        threadId: childThreadId,
        identity: request.identity,
        scope: request.scope,
        message: rt.userMessage(childThreadId, { text: input.prompt }),
        trigger: { type: "message", messageId: "" },
        clientTools: [],
        clientData: null,
        queueIfBusy: false,
      });
      const signals = input.signal ? [request.signal, input.signal] : [request.signal];
      const onAbort = () =>
        void rt.cancelRunOf(childThreadId, "the calling run was cancelled").catch(() => undefined);
      for (const signal of signals) signal.addEventListener("abort", onAbort, { once: true });
      try {
        await rt.waitForIdle(childThreadId);
      } finally {
        for (const signal of signals) signal.removeEventListener("abort", onAbort);
      }
      const snapshot = await rt.store.require(childThreadId);
      const run = snapshot.runs.find((candidate) => candidate.runId === sent.runId);
      const last = [...snapshot.messages].reverse().find((message) => message.role === "assistant");
      const text = (last?.message.parts ?? [])
        .filter((part): part is { type: "text"; text: string } => (part as { type: string }).type === "text")
        .map((part) => part.text)
        .join("");
      return { threadId: childThreadId, runId: sent.runId, status: run?.status ?? "failed", text };
    },
  };
}
