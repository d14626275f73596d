import { validatingJsonSchema } from "../definitions/json-schema-validation.js";
import { validateSchema } from "../definitions/schema.js";
import { PaiError } from "../errors/pai-error.js";
import { toolFailureDetails } from "../errors/tool-failure.js";
import { copyRows } from "../json/copy-rows.js";
import type { JsonValue } from "../json/json-value.js";
import { cancellationText } from "../state/call-texts.js";
import { decideResolve, matchesKind, type ResolveInput } from "../state/deciders/resolve-deciders.js";
import type { ActionRow, ClientToolSnapshot, RunRow } from "../state/rows.js";
import type { ThreadSnapshot } from "../state/snapshot.js";
import { findToolPart } from "../state/tool-parts.js";
import type { ActionResolution } from "../state/transitions.js";
import type { RuntimeScope, RuntimeToolRegistration } from "./definition-shapes.js";
import { RequestContext } from "./request-context.js";
import type { RuntimeCore } from "./runtime-core.js";
import { resolveEnabled, settleOutput } from "./tool-invoker.js";

/**
 * Answering a pending action with submit, cancel or fail. Everything that can refuse the answer
 * runs first and writes nothing (unknown action, disabled tool, invalid payload). Then one
 * commit decides on current state (`decideResolve`): the first answer wins, a retry with the
 * winner's idempotency key gets the winner's result. Only the winning commit's effects run:
 * the answered call's `afterToolResult` and `onOutput` (its outcome is stored after them, in a
 * second commit), re-entering a suspended tool, driving the run.
 */

export type ResolveRequest = {
  threadId: string;
  actionId: string;
  identity: unknown;
  scope: RuntimeScope;
  kind: "submit" | "cancel" | "fail";
  payload?: unknown;
  reason?: string | null;
  error?: string | { message: string };
  idempotencyKey?: string | null;
  clientTools?: ClientToolSnapshot[];
  clientData?: JsonValue | null;
  /**
   * The thread as the caller read it or as this process kept it (saves a read): the commit is
   * guarded by its version, and an action it lacks is looked up again on a fresh read.
   */
  snapshot?: ThreadSnapshot;
};

export async function resolveAction(
  rt: RuntimeCore,
  input: ResolveRequest,
): Promise<{ action: ActionRow; version: number }> {
  let snapshot = input.snapshot ?? (await rt.store.require(input.threadId));
  let action = snapshot.actions.find((candidate) => candidate.actionId === input.actionId);
  if (!action && input.snapshot) {
    // The caller's snapshot may be one this process kept, from before another server created
    // the action: only a fresh read may say it does not exist. Everything else it says holds
    // (an action's definition never changes and its state only moves on), and the commit
    // below is guarded by the snapshot's version.
    snapshot = await rt.store.require(input.threadId);
    action = snapshot.actions.find((candidate) => candidate.actionId === input.actionId);
  }
  if (!action) throw new PaiError("NOT_FOUND", `No action ${input.actionId} in thread ${input.threadId}.`);
  const idempotencyKey = input.idempotencyKey ?? null;
  if (action.state !== "pending") {
    // Answered before this request read the thread: no validation needed to know the answer.
    if (idempotencyKey && action.idempotencyKey === idempotencyKey && matchesKind(action, input.kind)) {
      return { action, version: action.resolvedVersion ?? snapshot.thread.version };
    }
    throw new PaiError(
      "CONFLICT",
      `Action ${action.name} (${action.actionId}) was already ${action.state}; it can be resolved only once.`,
    );
  }
  const agentEntry = rt.agent(snapshot.thread.agentId);
  const agent = agentEntry.definition;
  // Own registrations only: a client tool named `constructor` must not find Object.prototype's.
  const registration = Object.hasOwn(agent.tools, action.toolName) ? agent.tools[action.toolName] : undefined;
  const run = snapshot.runs.find((candidate) => candidate.runId === action.runId)!;
  const request = new RequestContext(
    agent,
    input.identity,
    input.scope,
    input.clientData ?? run.clientData ?? null,
    input.threadId,
    rt.registry.abortSignal(run.runId),
  );
  const clientTool = action.clientTool ?? run.clientTools.find((tool) => tool.name === action.toolName);
  if (!registration && !clientTool && input.kind === "submit") {
    throw new PaiError(
      "MIGRATION_REQUIRED",
      `Tool "${action.toolName}" is no longer registered, so its unfinished call cannot be completed. Cancel or fail the action, or migrate the stored call.`,
    );
  }
  const hasAfterHooks = Boolean(rt.hooks?.afterToolResult || agent.lifecycle?.afterToolResult);
  // Hooks of the answered call run once, for the answer that won, before its outcome is stored.
  const hasHooks = hasAfterHooks || Boolean(registration?.onOutput);
  let resolution: ActionResolution;
  let finish: ResolveInput["finish"] = { type: "none" };
  let resume: unknown;
  if (input.kind === "submit") {
    if (registration && !(await resolveEnabled(registration, await request.resolverArgs()))) {
      throw new PaiError(
        "TOOL_DISABLED",
        `Tool "${action.toolName}" is disabled, so ${action.name} cannot be submitted. Cancel or fail the action instead.`,
      );
    }
    const parsedValue = await parsePayload(
      action,
      submitSchema(action, registration, clientTool),
      input.payload,
    );
    const payload = input.payload === undefined ? null : rt.json(input.payload, `Payload for ${action.name}`);
    resolution = { type: "submit", payload };
    if (action.kind === "suspend") {
      // Parsed by the suspension's resumeSchema: what the re-entered tool receives.
      resume = parsedValue;
      if (registration) finish = { type: "resume" };
    } else {
      let output: JsonValue | undefined = parsedValue as JsonValue | undefined;
      if (registration) {
        const settled = await settleOutput(registration.tool, action.toolName, parsedValue);
        if (!settled.ok) throw new PaiError("INVALID_INPUT", settled.errorText);
        output = settled.output;
      }
      const outcome = { type: "output" as const, output };
      if (hasHooks) finish = { type: "hooks", outcome };
      else resolution = { type: "submit", payload, outcome };
    }
  } else if (input.kind === "cancel") {
    resolution = { type: "cancel", reason: input.reason ?? null, errorText: cancellationText(input.reason) };
  } else {
    const message = toolFailureDetails(
      typeof input.error === "string" ? input.error : (input.error?.message ?? ""),
    ).message;
    resolution = { type: "fail", message, errorText: message };
    // afterToolResult sees every result, failures included, and may turn this one into an output.
    if (hasAfterHooks) finish = { type: "hooks", outcome: { type: "error", errorText: message } };
  }
  // An API instance on a job engine leaves re-entering the tool to the worker that drives the run.
  const queueResume = finish.type === "resume" && !rt.dispatch.drivesHere;
  const claims = (finish.type === "resume" && !queueResume) || finish.type === "hooks";
  // Claimed before the commit so a concurrent driver never mistakes the call for a crash leftover.
  if (claims) rt.registry.claimAnswer(run.runId, action.toolCallId);
  // Held across the commit so the snapshot it produces stays cached for the work that follows.
  const held = rt.store.hold(input.threadId);
  try {
    const committed = await rt.writer.commit(
      input.threadId,
      (state, now) =>
        decideResolve(
          state,
          {
            actionId: input.actionId,
            kind: input.kind,
            resolution,
            idempotencyKey,
            finish,
            queueResume,
            ...(input.clientTools
              ? { clientTools: input.clientTools, identity: toJsonOrNull(rt, input.identity) }
              : {}),
          },
          now,
        ),
      {
        fresh: snapshot,
        origin: {
          identity: input.identity,
          scope: input.scope,
          request,
          resume,
          callInput: findCallInput(snapshot, action),
        },
      },
    );
    const value = committed.value;
    if (value.type === "replayed") {
      if (claims) rt.registry.releaseAnswer(run.runId, action.toolCallId);
      return { action: copyRows(value.action), version: value.version };
    }
    // A copy: the committed snapshot stays cached for the run, and the caller owns what it gets.
    return { action: copyRows(value.action), version: committed.version };
  } catch (error) {
    // On success the claim passes to the effect that finishes the call, which drops it when done.
    if (claims) rt.registry.releaseAnswer(run.runId, action.toolCallId);
    throw error;
  } finally {
    held();
  }
}

async function parsePayload(action: ActionRow, schema: unknown, payload: unknown): Promise<unknown> {
  if (!schema) return payload;
  const parsed = await validateSchema(schema as never, payload);
  if (!parsed.success) {
    throw new PaiError(
      "INVALID_INPUT",
      `The payload for ${action.name} is invalid: ${parsed.message}. The action is still waiting; submit a corrected payload.`,
      { issues: parsed.issues },
    );
  }
  return parsed.value;
}

function submitSchema(
  action: ActionRow,
  registration: RuntimeToolRegistration | undefined,
  clientTool: ClientToolSnapshot | undefined,
) {
  if (action.kind === "suspend") {
    const points = registration?.tool.config.suspend;
    const name = action.suspendName ?? "";
    return points && Object.hasOwn(points, name) ? points[name]?.resumeSchema : undefined;
  }
  if (registration) return registration.tool.config.outputSchema;
  return clientTool?.outputSchema ? validatingJsonSchema(clientTool.outputSchema) : undefined;
}

export function findCallInput(snapshot: ThreadSnapshot, action: ActionRow): unknown {
  const tail = snapshot.messages.findLast((message) => message.messageId === action.messageId);
  return tail ? findToolPart(tail.message, action.toolCallId)?.part.input : undefined;
}

function toJsonOrNull(rt: RuntimeCore, value: unknown): JsonValue | null {
  if (value === undefined) return null;
  try {
    return rt.json(value);
  } catch {
    return null;
  }
}

export type { RunRow };
