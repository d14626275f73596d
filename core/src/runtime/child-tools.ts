import { validateSchema } from "../definitions/schema.js";
import { createFailResult, isFailResult, isSuspendResult } from "../definitions/tool-results.js";
import { PaiError } from "../errors/pai-error.js";
import { toolFailureDetails } from "../errors/tool-failure.js";
import { ToolInvocationError } from "../errors/tool-invocation-error.js";
import type { CapabilityRegistry } from "./capability-bindings.js";
import type { RuntimeHooks, RuntimeResolverArgs, RuntimeToolDefinition } from "./definition-shapes.js";
import type { RequestContext } from "./request-context.js";
import { applyAfterToolResult, type HookFailure, mapToolError, observeOutput } from "./tool-hooks.js";
import { NESTED_TOOL_ERROR_TEXT, resolveEnabled, resolveToolContext, settleOutput } from "./tool-invoker.js";

/**
 * `ctx.tools`: a tool's children, bound to the parent call. A child call validates its input,
 * maps context, acquires capabilities, executes, validates its output, then takes the same
 * hook path as a top-level call (`afterToolResult` told which parent call made it, then
 * `onOutput`). Failures reject with `ToolInvocationError`; a failing hook is handed to
 * `onHookFailure` (the parent's run fails) and rejects the call.
 */

export type ChildCallEnvironment = {
  request: RequestContext;
  parentContext: unknown;
  parent: { toolName: string; toolCallId: string };
  hooks: Parameters<typeof applyAfterToolResult>[0];
  capabilities: CapabilityRegistry;
  generateId: () => string;
  baseCtx: Record<string, unknown>;
  signal: AbortSignal;
  /**
   * Aborted when the parent's invocation finishes: its children's handles close with it. A call
   * after that is refused, and one still in flight is cancelled and skips the hooks, since the
   * parent's result no longer waits for it.
   */
  closed: AbortSignal;
  onHookFailure: (failure: HookFailure) => void;
};

export async function buildChildTools(
  parent: RuntimeToolDefinition,
  env: ChildCallEnvironment,
): Promise<Record<string, unknown>> {
  const children: Record<string, unknown> = {};
  // Registration callbacks (enabled, mapContext, onOutput) see the enclosing tool's context as
  // their runtimeContext; the agent's lifecycle hooks keep the agent's whole runtime context.
  const agentArgs = await env.request.resolverArgs();
  const args: RuntimeResolverArgs = { ...agentArgs, runtimeContext: env.parentContext };
  for (const [name, registration] of Object.entries(parent.tools ?? {})) {
    env.signal.throwIfAborted();
    const enabled = await resolveEnabled(registration, args);
    const child = registration.tool;
    const execute = async (rawInput: unknown, options?: { abortSignal?: AbortSignal }) => {
      const toolCallId = `${env.generateId()}`;
      const call = { toolName: name, toolCallId, parent: env.parent };
      const fail = (message: string, cause?: unknown) =>
        new ToolInvocationError({ toolName: name, toolCallId, message, cause });
      const afterParent = () =>
        fail(
          `Tool ${name} was called by ${env.parent.toolName} after that call finished. Await child calls before returning.`,
        );
      if (env.closed.aborted) throw afterParent();
      if (!enabled) throw fail(`Tool ${name} is not enabled for this call.`);
      const signal = AbortSignal.any(
        options?.abortSignal ? [env.signal, env.closed, options.abortSignal] : [env.signal, env.closed],
      );
      signal.throwIfAborted();
      const parsedInput = await validateSchema(child.config.inputSchema, rawInput);
      if (!parsedInput.success) throw fail(`Invalid input for tool ${name}: ${parsedInput.message}`);
      const context = await resolveToolContext(registration, args);
      const acquired: Array<() => Promise<void>> = [];
      const facades: Record<string, unknown> = {};
      let result: { type: "output"; output: unknown } | { type: "error"; errorText: string; cause?: unknown };
      try {
        for (const [alias, capability] of Object.entries(child.capabilities ?? {})) {
          const { facade, done } = await env.capabilities.acquire(capability, {
            scopeKey: env.request.scope.scopeKey,
            threadId: env.request.threadId,
            signal,
          });
          facades[alias] = facade;
          acquired.push(done);
        }
        if (signal.aborted)
          throw fail(`Call of tool ${name} was cancelled before it started.`, signal.reason);
        let raw: unknown;
        try {
          raw = await child.execute!({
            ...env.baseCtx,
            input: parsedInput.value,
            context,
            capabilities: Object.freeze(facades),
            tools: Object.freeze({}),
            signal,
            entry: { type: "initial" },
            suspendHistory: [],
            thread: { ...(env.baseCtx.thread as object), toolCallId, toolName: name },
            suspend: () => {
              throw new PaiError("UNSUPPORTED_ENTRY", `Child tool ${name} cannot suspend.`);
            },
            fail: (message: string) => createFailResult(message),
            data: {
              write: async () => {
                throw new PaiError("UNSUPPORTED_ENTRY", `Child tool ${name} cannot write tool data.`);
              },
              list: async () => [],
            },
          });
        } catch (error) {
          if (ToolInvocationError.isInstance(error)) throw error;
          raw = undefined;
          result = {
            type: "error",
            errorText: mapToolError(env.hooks, { ...call, error }) ?? NESTED_TOOL_ERROR_TEXT,
            cause: error,
          };
        }
        result ??= await settleChild(child, name, raw);
      } finally {
        for (const done of acquired) await done();
      }
      if (env.closed.aborted) throw afterParent();
      const after = await applyAfterToolResult(env.hooks, {
        ...call,
        input: parsedInput.value,
        result: result.type === "output" ? result : { type: "error", errorText: result.errorText },
        args: agentArgs,
      });
      if (after.type === "hook-failed") {
        env.onHookFailure(after);
        throw fail(NESTED_TOOL_ERROR_TEXT, after.error);
      }
      if (after.result.type === "error") {
        throw fail(after.result.errorText, result.type === "error" ? result.cause : undefined);
      }
      const observed = await observeOutput(registration, {
        ...call,
        input: parsedInput.value,
        output: after.result.output,
        args,
      });
      if (observed) {
        env.onHookFailure(observed);
        throw fail(NESTED_TOOL_ERROR_TEXT, observed.error);
      }
      return after.result.output;
    };
    children[name] = Object.freeze({
      enabled,
      description: typeof child.config.description === "string" ? child.config.description : "",
      inputSchema: child.config.inputSchema,
      ...(child.config.outputSchema ? { outputSchema: child.config.outputSchema } : {}),
      execute,
    });
  }
  return Object.freeze(children);
}

async function settleChild(
  child: RuntimeToolDefinition,
  name: string,
  raw: unknown,
): Promise<{ type: "output"; output: unknown } | { type: "error"; errorText: string }> {
  if (isFailResult(raw)) return { type: "error", errorText: toolFailureDetails(raw.message).message };
  if (isSuspendResult(raw)) return { type: "error", errorText: `Child tool ${name} cannot suspend.` };
  const settled = await settleOutput(child, name, raw);
  return settled.ok
    ? { type: "output", output: settled.output }
    : { type: "error", errorText: settled.errorText };
}

export type { RuntimeHooks };
