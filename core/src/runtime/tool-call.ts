import { validateSchema } from "../definitions/schema.js";
import { getErrorMessage } from "../errors/pai-error.js";
import { decideSettle, decideSuspension } from "../state/deciders/call-deciders.js";
import type { ActionRow } from "../state/rows.js";
import type { ToolOutcome } from "../state/transitions.js";
import { type CallEntry, executeTool } from "./execute-tool.js";
import type { RequestContext } from "./request-context.js";
import type { RegisteredAgent, RuntimeCore } from "./runtime-core.js";
import {
  applyAfterToolResult,
  type HookFailure,
  hasAfterToolResult,
  observeOutput,
  toOutcome,
} from "./tool-hooks.js";
import { resolveEnabled } from "./tool-invoker.js";

/**
 * One backend tool call, initial or resumed: check it may run (enabled, bounded, valid
 * input), execute it, then commit what it ended as: a suspension (a new pending action) or an
 * outcome after `afterToolResult` and `onOutput` (awaited before the output is committed).
 * Tool failures are outcomes; a failing hook is returned, and the caller fails the run.
 */
export async function runToolCall(
  rt: RuntimeCore,
  call: {
    threadId: string;
    runId: string;
    toolCallId: string;
    toolName: string;
    input: unknown;
    entry: CallEntry;
    request: RequestContext;
    agentEntry: RegisteredAgent;
  },
): Promise<HookFailure | null> {
  const { threadId, runId, toolCallId, toolName, request, agentEntry } = call;
  const registration = agentEntry.definition.tools[toolName]!;
  const inflight = rt.registry.inflight(runId);
  inflight.add(toolCallId);
  const ids = {
    threadId,
    runId,
    agentId: agentEntry.id,
    scopeKey: request.scope.scopeKey,
    toolName,
    toolCallId,
  };
  let ended: { outcome: "output" | "error" | "suspended"; errorText?: string } = {
    outcome: "error",
    errorText: "The call did not complete.",
  };
  rt.emit({ type: "tool-start", ...ids, entry: call.entry.type });
  try {
    const args = await request.resolverArgs();
    const parsedInput = await validateSchema(registration.tool.config.inputSchema, call.input);
    let outcome: ToolOutcome;
    const unbounded = jsonProblem(rt, call.input, `Input of tool ${toolName}`);
    if (!(await resolveEnabled(registration, args))) {
      outcome = { type: "error", errorText: `Tool ${toolName} is currently unavailable.` };
    } else if (unbounded) {
      outcome = { type: "error", errorText: unbounded };
    } else if (!parsedInput.success) {
      outcome = { type: "error", errorText: `Invalid input for tool ${toolName}: ${parsedInput.message}` };
    } else {
      const executed = await executeTool(rt, { ...call, registration, parsedInput: parsedInput.value });
      if (executed.type === "hook-failed") return executed;
      if (executed.type === "suspend") {
        const action = await suspensionAction(rt, call, executed);
        await rt.writer.commitUnlessStale(
          threadId,
          (state, now) => decideSuspension(state, { action }, now),
          {
            fence: runId,
          },
        );
        ended = { outcome: "suspended" };
        return null;
      }
      outcome = executed.outcome;
    }
    const input = parsedInput.success ? parsedInput.value : call.input;
    const hooks = { agent: agentEntry.definition, runtime: rt.hooks };
    let final = outcome;
    if (hasAfterToolResult(hooks)) {
      const after = await applyAfterToolResult(hooks, { toolName, toolCallId, input, result: outcome, args });
      if (after.type === "hook-failed") return after;
      final = toOutcome(after.result, `Output of tool ${toolName}`, rt.options.jsonLimits);
    }
    // onOutput is awaited before the output is committed: the next step never runs ahead of it.
    if (final.type === "output" && registration.onOutput) {
      const failure = await observeOutput(registration, {
        toolName,
        toolCallId,
        input,
        output: final.output,
        args,
      });
      if (failure) return failure;
    }
    await rt.writer.commitUnlessStale(
      threadId,
      (state, now) => decideSettle(state, { runId, toolCallId, outcome: final }, now),
      { fence: runId },
    );
    ended =
      final.type === "output" ? { outcome: "output" } : { outcome: "error", errorText: final.errorText };
    return null;
  } finally {
    inflight.delete(toolCallId);
    rt.emit({ type: "tool-end", ...ids, ...ended });
  }
}

async function suspensionAction(
  rt: RuntimeCore,
  call: { threadId: string; runId: string; toolCallId: string; toolName: string },
  suspension: { name: string; input: ActionRow["input"]; deadline: ActionRow["deadline"] },
): Promise<ActionRow> {
  const snapshot = await rt.store.snapshot(call.threadId);
  const episode =
    snapshot.actions.filter((action) => action.toolCallId === call.toolCallId && action.kind === "suspend")
      .length + 1;
  const run = snapshot.runs.find((candidate) => candidate.runId === call.runId);
  return {
    threadId: call.threadId,
    actionId: rt.generateId(),
    scopeKey: snapshot.thread.scopeKey,
    runId: call.runId,
    messageId: run?.messageId ?? "",
    toolCallId: call.toolCallId,
    toolName: call.toolName,
    kind: "suspend",
    suspendName: suspension.name,
    name: `${call.toolName}.${suspension.name}`,
    input: suspension.input,
    state: "pending",
    episode,
    createdAt: rt.now(),
    resolvedAt: null,
    resume: null,
    reason: null,
    idempotencyKey: null,
    // Only set when there is one, so a row without a deadline is stored exactly as before.
    ...(suspension.deadline ? { deadline: suspension.deadline } : {}),
  };
}

function jsonProblem(rt: RuntimeCore, value: unknown, label: string): string | null {
  try {
    rt.json(value, label);
    return null;
  } catch (error) {
    return getErrorMessage(error);
  }
}
