import type { JsonValue } from "../../json/json-value.js";
import { parkIfBlocked } from "../park-run.js";
import type { ActionDeadline, ActionRow, ClientToolSnapshot, RunRow, ToolDataRow } from "../rows.js";
import { applyThreadEvents, type ThreadSnapshot } from "../snapshot.js";
import {
  commitStep,
  setRunStatus,
  settleToolCall,
  suspendToolCall,
  TERMINAL_RUN_STATUSES,
  type ToolOutcome,
  writeToolData,
} from "../transitions.js";
import { type Decision, decided, type Effect, fromTransition, rejected } from "./decision.js";

/**
 * Deciders of a model step and its tool calls: plan the step's parts and actions, commit the
 * step (parking or completing the run in the same commit), open a suspension, settle a call,
 * write tool data. All run-scoped writes of the driver, so the runtime fences them by lease.
 */

/** What the model produced in one step, in stream order. */
export type CollectedStep = Array<
  | { kind: "text" | "reasoning"; text: string }
  | {
      kind: "tool";
      toolCallId: string;
      toolName: string;
      input: JsonValue | undefined;
      /** The SDK refused the call (invalid input, unknown tool): settled as this error. */
      errorText?: string;
      /** The agent has no registration of this name (client tools, unknown names). */
      dynamic: boolean;
    }
>;

/** How the agent handles a tool name: executed on the server, answered by a client, or unknown. */
export type ToolRoute = "execute" | "output" | "client" | "unknown";

/**
 * The deadline of a client-routed call's output action, resolved by the caller (it runs the
 * tool's own code, which a planner must not): a deadline, or why the call fails instead.
 */
export type OutputDeadline = { deadline: ActionDeadline } | { errorText: string };

export type PlannedStep = {
  parts: unknown[];
  outputActions: ActionRow[];
  toExecute: Array<{ toolCallId: string; toolName: string; input: JsonValue | undefined }>;
  settled: Array<{ toolCallId: string; outcome: ToolOutcome }>;
  /** No tool calls: the run completes with this step. */
  finalStep: boolean;
};

/** Turns a step's model output into native parts, output actions for clients, and calls to execute. */
export function planStep(
  collected: CollectedStep,
  input: {
    thread: { threadId: string; scopeKey: string };
    run: RunRow;
    messageId: string;
    now: string;
    route: (toolName: string) => ToolRoute;
    /** By tool call id; calls without an entry wait without a deadline. */
    deadlines?: ReadonlyMap<string, OutputDeadline>;
  },
): PlannedStep {
  const planned: PlannedStep = {
    parts: [{ type: "step-start" }],
    outputActions: [],
    toExecute: [],
    settled: [],
    finalStep: true,
  };
  for (const item of collected) {
    if (item.kind !== "tool") {
      planned.parts.push({ type: item.kind, text: item.text, state: "done" });
      continue;
    }
    planned.finalStep = false;
    const base = item.dynamic
      ? { type: "dynamic-tool", toolName: item.toolName, toolCallId: item.toolCallId }
      : { type: `tool-${item.toolName}`, toolCallId: item.toolCallId };
    planned.parts.push({ ...base, state: "input-available", input: item.input });
    if (item.errorText !== undefined) {
      planned.settled.push({
        toolCallId: item.toolCallId,
        outcome: { type: "error", errorText: item.errorText },
      });
      continue;
    }
    const route = input.route(item.toolName);
    if (route === "execute") {
      planned.toExecute.push({ toolCallId: item.toolCallId, toolName: item.toolName, input: item.input });
      continue;
    }
    if (route === "unknown") {
      planned.settled.push({
        toolCallId: item.toolCallId,
        outcome: { type: "error", errorText: `Tool ${item.toolName} is not available.` },
      });
      continue;
    }
    const deadline = input.deadlines?.get(item.toolCallId);
    if (deadline && "errorText" in deadline) {
      planned.settled.push({
        toolCallId: item.toolCallId,
        outcome: { type: "error", errorText: deadline.errorText },
      });
      continue;
    }
    const clientTool: ClientToolSnapshot | undefined =
      route === "client" ? input.run.clientTools.find((tool) => tool.name === item.toolName) : undefined;
    planned.outputActions.push({
      threadId: input.thread.threadId,
      actionId: item.toolCallId,
      scopeKey: input.thread.scopeKey,
      runId: input.run.runId,
      messageId: input.messageId,
      toolCallId: item.toolCallId,
      toolName: item.toolName,
      kind: "output",
      suspendName: null,
      name: `${item.toolName}.output`,
      input: item.input ?? null,
      state: "pending",
      episode: 1,
      createdAt: input.now,
      resolvedAt: null,
      resume: null,
      reason: null,
      idempotencyKey: null,
      // The call keeps the registration it was made with: a later request may send other client tools.
      ...(clientTool ? { clientTool } : {}),
      ...(deadline ? { deadline: deadline.deadline } : {}),
    });
  }
  return planned;
}

/**
 * Commits a planned step. A step whose calls all wait for a client parks the run in the same
 * commit (the driver then finds it parked); a step without tool calls completes it (one write
 * instead of two).
 */
export function decideStep(
  snapshot: ThreadSnapshot,
  input: { runId: string; messageId: string; expectedStep: number; planned: PlannedStep },
  now: string,
): Decision<{ completed: boolean }> {
  const { planned } = input;
  const step = commitStep(snapshot, {
    runId: input.runId,
    messageId: input.messageId,
    parts: planned.parts,
    outputActions: planned.outputActions,
    settled: planned.settled,
    now,
    expectedStep: input.expectedStep,
  });
  if (!step.ok) return step;
  const opened: Effect[] = planned.outputActions.map((action) => ({ type: "action-opened", action }));
  if (!planned.finalStep) {
    return fromTransition(parkIfBlocked(snapshot, step, { runId: input.runId, now }), opened, {
      completed: false,
    });
  }
  const stepped = applyThreadEvents(snapshot, step.events);
  const done = setRunStatus(stepped, { runId: input.runId, status: "completed", now });
  if (!done.ok) return done;
  return decided(
    [...step.events, ...done.events],
    [...opened, { type: "run-ended", runId: input.runId, status: "completed", error: null }],
    { completed: true },
    applyThreadEvents(stepped, done.events),
  );
}

/** Opens a suspension of a running call; parks the run when it was the last call without an outcome. */
export function decideSuspension(
  snapshot: ThreadSnapshot,
  input: { action: ActionRow },
  now: string,
): Decision {
  const parked = parkIfBlocked(snapshot, suspendToolCall(snapshot, { action: input.action, now }), {
    runId: input.action.runId,
    now,
  });
  return fromTransition(parked, [{ type: "action-opened", action: input.action }], undefined);
}

/** Records a call's outcome; parks the run when only pending actions are left. */
export function decideSettle(
  snapshot: ThreadSnapshot,
  input: { runId: string; toolCallId: string; outcome: ToolOutcome },
  now: string,
): Decision {
  const settled = parkIfBlocked(
    snapshot,
    settleToolCall(snapshot, {
      runId: input.runId,
      toolCallId: input.toolCallId,
      outcome: input.outcome,
      now,
    }),
    { runId: input.runId, now },
  );
  return fromTransition(settled, [], undefined);
}

/** Writes one durable tool-data item of a call whose run is still active. */
export function decideToolData(
  snapshot: ThreadSnapshot,
  input: { runId: string; item: ToolDataRow },
): Decision {
  const run = snapshot.runs.find((candidate) => candidate.runId === input.runId);
  if (!run || TERMINAL_RUN_STATUSES.has(run.status)) {
    return rejected("CONFLICT", `Run ${input.runId} has ended; its tools can no longer write tool data.`);
  }
  return fromTransition(writeToolData(snapshot, { item: input.item }), [], undefined);
}
