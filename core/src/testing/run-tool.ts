import type { FilesV1 } from "../ports/files.js";
import type { StorageV1 } from "../ports/storage.js";
import type { CapabilityBinding } from "../runtime/capability-bindings.js";
import { createTestRuntime } from "./create-test-runtime.js";

/** How one tool call ended when run alone by `runTool`. */
export type RunToolResult =
  | { type: "output"; output: unknown }
  | { type: "error"; errorText: string }
  | {
      /** The call waits on a pending action (a named suspension, or client output for tools without execute). */
      type: "waiting";
      action: { actionId: string; name: string; kind: "suspend" | "output"; input: unknown };
      /** Submits the action and returns how the call ends next. */
      submit(payload: unknown): Promise<RunToolResult>;
      cancel(reason?: string): Promise<RunToolResult>;
      fail(message: string): Promise<RunToolResult>;
    };

export type RunToolOptions = {
  /** The raw input, as a model would send it (the tool's input schema parses it). */
  input: unknown;
  /** The tool's context (what `ctx.context` receives). */
  context?: unknown;
  /** Bindings for the capabilities the tool declares, keyed by capability id. */
  capabilities?: Record<string, CapabilityBinding<any>>;
  files?: FilesV1;
  /** Required, as for `createTestRuntime`: core loads no storage adapter itself. */
  storage: StorageV1;
};

/**
 * Runs one tool definition through the real runtime (validation, suspension, data, files,
 * capabilities) with a one-call scripted model, and reports how the call ended. Waiting calls
 * can be answered from the result to test resume paths.
 */
export async function runTool(
  tool: { readonly kind: "tool" },
  options: RunToolOptions,
): Promise<RunToolResult> {
  const context = options.context;
  const agent = {
    kind: "agent" as const,
    name: "run-tool",
    runtimeContext: () => context,
    tools: { tool: { tool } },
  };
  const runtime = await createTestRuntime({
    agent: agent as never,
    model: (() => {
      let called = false;
      return {
        specificationVersion: "v4",
        provider: "pai-run-tool",
        modelId: "run-tool",
        supportedUrls: {},
        doGenerate: async () => {
          throw new Error("runTool streams");
        },
        doStream: async () => {
          const parts = called
            ? [
                { type: "stream-start", warnings: [] },
                { type: "finish", usage: USAGE, finishReason: { unified: "stop", raw: undefined } },
              ]
            : [
                { type: "stream-start", warnings: [] },
                {
                  type: "tool-call",
                  toolCallId: "run-tool-call",
                  toolName: "tool",
                  input: JSON.stringify(options.input ?? {}),
                },
                { type: "finish", usage: USAGE, finishReason: { unified: "tool-calls", raw: undefined } },
              ];
          called = true;
          return {
            stream: new ReadableStream({
              start(controller) {
                for (const part of parts) controller.enqueue(part);
                controller.close();
              },
            }),
          };
        },
      };
    })() as never,
    storage: options.storage,
    ...(options.files ? { files: options.files } : {}),
    ...(options.capabilities ? { capabilities: options.capabilities } : {}),
  });
  const threadId = await runtime.createThread();
  await runtime.send(threadId, "run the tool");

  const inspect = async (): Promise<RunToolResult> => {
    const [part] = await runtime.toolParts(threadId);
    const pending = (await runtime.pending(threadId))[0];
    if (pending) {
      const answer = async (answerIt: () => Promise<unknown>) => {
        await answerIt();
        return inspect();
      };
      return {
        type: "waiting",
        action: { actionId: pending.actionId, name: pending.name, kind: pending.kind, input: pending.input },
        submit: (payload) => answer(() => runtime.submit(threadId, pending.actionId, payload)),
        cancel: (reason) => answer(() => runtime.cancel(threadId, pending.actionId, reason)),
        fail: (message) => answer(() => runtime.fail(threadId, pending.actionId, message)),
      };
    }
    await runtime.close();
    if (part?.state === "output-available") return { type: "output", output: part.output };
    return { type: "error", errorText: String(part?.errorText ?? "The tool call did not finish.") };
  };
  return inspect();
}

const USAGE = {
  inputTokens: { total: 1, noCache: 1, cacheRead: 0, cacheWrite: 0 },
  outputTokens: { total: 1, text: 1, reasoning: 0 },
};
