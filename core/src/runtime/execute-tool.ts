import { resolveDeadline, type SuspendOptions } from "../definitions/deadline.js";
import { validateSchema } from "../definitions/schema.js";
import {
  createFailResult,
  createSuspendResult,
  isFailResult,
  isSuspendResult,
} from "../definitions/tool-results.js";
import { getErrorMessage, PaiError } from "../errors/pai-error.js";
import { toolFailureDetails } from "../errors/tool-failure.js";
import { assertPlainKeys, type JsonValue } from "../json/json-value.js";
import { cancellationText } from "../state/call-texts.js";
import type { ActionDeadline, ActionRow } from "../state/rows.js";
import type { ToolOutcome } from "../state/transitions.js";
import { actionRef, toSuspendHistoryItem } from "./action-views.js";
import { buildChildTools } from "./child-tools.js";
import type { RuntimeToolRegistration } from "./definition-shapes.js";
import type { RequestContext } from "./request-context.js";
import type { RegisteredAgent, RuntimeCore } from "./runtime-core.js";
import { agentRunner, scopedFiles, toolDataWriter } from "./tool-context.js";
import { type HookFailure, mapToolError } from "./tool-hooks.js";
import { resolveToolContext, settleOutput } from "./tool-invoker.js";

/**
 * One execution of a tool's `execute`: acquire its capabilities, build `ctx` (the same
 * context pieces children get), call it, and read what it returned: an output, a `ctx.fail`,
 * a `ctx.suspend` at a declared wait point, or an exception (mapped by `mapError`).
 */

export type CallEntry = { type: "initial" } | { type: "resume"; action: ActionRow; resume: unknown };

export type Execution =
  | { type: "outcome"; outcome: ToolOutcome }
  | { type: "suspend"; name: string; input: JsonValue; deadline: ActionDeadline | null }
  /** A child call's hook threw: the run fails. */
  | HookFailure;

const NEVER_ABORTED = new AbortController().signal;

export async function executeTool(
  rt: RuntimeCore,
  call: {
    threadId: string;
    runId: string;
    toolCallId: string;
    toolName: string;
    entry: CallEntry;
    request: RequestContext;
    agentEntry: RegisteredAgent;
    registration: RuntimeToolRegistration;
    parsedInput: unknown;
  },
): Promise<Execution> {
  const { registration, request, toolName, toolCallId, threadId, runId } = call;
  const tool = registration.tool;
  const hooks = { agent: call.agentEntry.definition, runtime: rt.hooks };
  const args = await request.resolverArgs();
  const signal = request.signal;
  const acquired: Array<() => Promise<void>> = [];
  // Closes the children's handles (`ctx.tools`) when this invocation finishes; a tool without
  // children has none to close.
  const invocation = tool.tools ? new AbortController() : undefined;
  let childHookFailure: HookFailure | undefined;
  // A tool's own throw that is a PaiError is a deliberate message; anything else around it is reported.
  const failed = (error: unknown, fromTool: boolean): Execution => {
    if (signal.aborted)
      return { type: "outcome", outcome: { type: "error", errorText: cancellationText(null) } };
    if (!fromTool || !PaiError.isInstance(error))
      rt.reportError({ error, phase: "tool", threadId, runId, toolName, toolCallId });
    const mapped = mapToolError(hooks, { toolName, toolCallId, error });
    return { type: "outcome", outcome: { type: "error", errorText: mapped ?? getErrorMessage(error) } };
  };
  try {
    const context = await resolveToolContext(registration, args);
    const facades: Record<string, unknown> = {};
    for (const [alias, capability] of Object.entries(tool.capabilities ?? {})) {
      const { facade, done } = await rt.capabilities.acquire(capability, {
        scopeKey: request.scope.scopeKey,
        threadId,
        signal,
      });
      facades[alias] = facade;
      acquired.push(done);
    }
    const snapshot = await rt.store.snapshot(threadId);
    const suspendHistory = snapshot.actions
      .filter((action) => action.toolCallId === toolCallId && action.kind === "suspend")
      .sort((a, b) => a.episode - b.episode)
      .map(toSuspendHistoryItem);
    const baseCtx = {
      agentId: call.agentEntry.id,
      agents: agentRunner(rt, request, threadId),
      thread: { threadId, runId, toolCallId, toolName },
      files: scopedFiles(rt, request.scope, threadId, signal),
      trigger: (triggerInput: { notification?: string; data?: unknown; hidden?: boolean }) =>
        rt.trigger({ threadId, scope: request.scope, identity: request.identity, ...triggerInput }),
    };
    const tools = await buildChildTools(tool, {
      closed: invocation?.signal ?? NEVER_ABORTED,
      request,
      parentContext: context,
      parent: { toolName, toolCallId },
      hooks,
      capabilities: rt.capabilities,
      generateId: rt.generateId,
      baseCtx,
      signal,
      onHookFailure: (failure) => {
        childHookFailure ??= failure;
      },
    });
    const entry =
      call.entry.type === "initial"
        ? { type: "initial" as const }
        : {
            type: "resume" as const,
            name: call.entry.action.suspendName!,
            resume: call.entry.resume,
            action: actionRef(call.entry.action),
          };
    let raw: unknown;
    try {
      raw = await tool.execute!({
        ...baseCtx,
        input: call.parsedInput,
        context,
        capabilities: Object.freeze(facades),
        tools,
        signal,
        entry,
        suspendHistory,
        data: toolDataWriter(rt, { registration, threadId, runId, toolCallId, request }),
        suspend: (name: string, suspendInput: unknown, options?: SuspendOptions) =>
          createSuspendResult(name, suspendInput, options),
        fail: (message: string) => createFailResult(message),
      });
    } catch (error) {
      if (childHookFailure) return childHookFailure;
      return failed(error, true);
    }
    if (childHookFailure) return childHookFailure;
    return await readResult(rt, tool, toolName, raw);
  } catch (error) {
    if (childHookFailure) return childHookFailure;
    return failed(error, false);
  } finally {
    invocation?.abort(new Error(`The call of ${toolName} finished.`));
    for (const done of acquired) {
      await done().catch((error) => rt.reportError({ error, phase: "hook", threadId, runId }));
    }
  }
}

async function readResult(
  rt: RuntimeCore,
  tool: RuntimeToolRegistration["tool"],
  toolName: string,
  raw: unknown,
): Promise<Execution> {
  const error = (errorText: string): Execution => ({
    type: "outcome",
    outcome: { type: "error", errorText },
  });
  if (isFailResult(raw)) return error(toolFailureDetails(raw.message).message);
  if (isSuspendResult(raw)) {
    const points = tool.config.suspend;
    // Own points only: `ctx.suspend("constructor")` must not find an Object.prototype member.
    const point = points && Object.hasOwn(points, raw.name) ? points[raw.name] : undefined;
    if (!point)
      return error(`Tool ${toolName} tried to suspend at "${raw.name}", which it does not declare.`);
    try {
      assertPlainKeys(raw.input, "Suspend data", rt.options.jsonLimits);
    } catch (problem) {
      return error(getErrorMessage(problem));
    }
    const parsed = await validateSchema(point.suspendSchema, raw.input);
    if (!parsed.success) {
      return error(
        `Tool ${toolName} suspended at "${raw.name}" with data that does not match its suspendSchema (${parsed.message}).`,
      );
    }
    // The call's own choice (even null) overrides the point's default.
    const chosen = "deadline" in raw ? raw.deadline : "deadline" in point ? point.deadline : undefined;
    const deadline = resolveDeadline(chosen, rt.now());
    if (!deadline.ok) {
      return error(
        `Tool ${toolName} suspended at "${raw.name}" with an invalid deadline: ${deadline.message}.`,
      );
    }
    try {
      return {
        type: "suspend",
        name: raw.name,
        input: rt.json(parsed.value ?? null, "Suspend data"),
        deadline: deadline.deadline,
      };
    } catch (problem) {
      return error(getErrorMessage(problem));
    }
  }
  const settled = await settleOutput(tool, toolName, raw);
  return settled.ok
    ? { type: "outcome", outcome: { type: "output", output: settled.output } }
    : error(settled.errorText);
}
