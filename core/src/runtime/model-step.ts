import { jsonSchema, type LanguageModel, type ModelMessage, type ToolSet } from "ai";
import { cachedSdkSchema } from "../definitions/cached-schema.js";
import { resolveDeadline } from "../definitions/deadline.js";
import { getErrorMessage, PaiError } from "../errors/pai-error.js";
import { type JsonValue, normalizeJson } from "../json/json-value.js";
import {
  type CollectedStep,
  decideStep,
  type OutputDeadline,
  planStep,
  type ToolRoute,
} from "../state/deciders/call-deciders.js";
import type { RunRow } from "../state/rows.js";
import type { ThreadSnapshot } from "../state/snapshot.js";
import type { RuntimeAgentDefinition, RuntimeToolRegistration } from "./definition-shapes.js";
import { type ModelCallPart, streamModelCall } from "./model-call.js";
import type { RequestContext } from "./request-context.js";
import type { Committed } from "./run-writer.js";
import type { RegisteredAgent, RuntimeCore } from "./runtime-core.js";
import { runToolCall } from "./tool-call.js";
import type { HookFailure } from "./tool-hooks.js";
import { resolveDescription, resolveEnabled } from "./tool-invoker.js";

/**
 * One model step of a run: prepare the tools the model may call and the history it sees,
 * stream one model call (text and reasoning deltas go live to watchers), plan what it
 * produced (`planStep`), commit it under the run's lease, then execute the backend calls.
 */
export async function modelStep(
  rt: RuntimeCore,
  snapshot: ThreadSnapshot,
  run: RunRow,
  agentEntry: RegisteredAgent,
  request: RequestContext,
): Promise<{ completed: boolean; hookFailure: HookFailure | null; carryOut?: () => Promise<void> }> {
  const agent = agentEntry.definition;
  const threadId = snapshot.thread.threadId;
  const model: LanguageModel | undefined = agent.model ?? rt.options.model;
  if (!model) {
    throw new PaiError(
      "INVALID_DEFINITION",
      `Agent "${agentEntry.id}" has no model. Set defineAgent({ model }) or createAgentRuntime({ model }).`,
    );
  }
  const { modelTools, historyTools } = await prepareTools(run, agent, request);
  const args = await request.resolverArgs();
  const instructions =
    typeof agent.instructions === "function" ? await agent.instructions(args) : agent.instructions;
  let messages: ModelMessage[];
  try {
    messages = await rt.history.convert(agent, threadId, snapshot.messages, historyTools);
  } catch (error) {
    throw new PaiError(
      "INTERNAL",
      `Preparing the model history failed (a toModelOutput converter threw?): ${getErrorMessage(error)}`,
      { cause: error },
    );
  }
  const messageId = run.messageId ?? rt.generateId();
  const live = (event: Parameters<RuntimeCore["notifier"]["publish"]>[0]) =>
    void rt.notifier.publish(event).catch(() => undefined);
  live({
    type: "live",
    threadId,
    event: { type: "step-started", threadId, runId: run.runId, step: run.step + 1 },
  });
  const runIds = { threadId, runId: run.runId, agentId: agentEntry.id, scopeKey: snapshot.thread.scopeKey };
  rt.emit({
    type: "model-start",
    ...runIds,
    step: run.step + 1,
    provider: typeof model === "string" ? "gateway" : model.provider,
    modelId: typeof model === "string" ? model : model.modelId,
  });
  // One model call per step: PAI owns the loop, so it makes single calls rather than going
  // through streamText's multi-step machinery.
  const stream = await streamModelCall({
    model,
    instructions,
    messages,
    tools: modelTools,
    abortSignal: request.signal,
    promptCache: rt.history.providerPrompt(threadId),
    download: rt.options.download,
  });
  const { collected, toolCalls, streamError } = await collectStream(stream, {
    isRegistered: (name) => registrationOf(agent, name) !== undefined,
    onDelta: (kind, delta, blockId) =>
      live({
        type: "live",
        threadId,
        event: {
          type: kind === "text" ? "text-delta" : "reasoning-delta",
          threadId,
          runId: run.runId,
          messageId,
          delta,
          // A watcher that attached mid-run places the delta by these, not by what it saw before.
          blockId,
          step: run.step + 1,
        },
      }),
  });
  rt.emit({
    type: "model-end",
    ...runIds,
    step: run.step + 1,
    toolCalls,
    ...(streamError !== undefined ? { error: streamError } : {}),
  });
  if (streamError !== undefined) {
    throw new PaiError("INTERNAL", `The model call failed: ${getErrorMessage(streamError)}`, {
      cause: streamError,
    });
  }
  const route = (toolName: string): ToolRoute => {
    const registration = registrationOf(agent, toolName);
    if (registration) return registration.tool.execute ? "execute" : "output";
    return run.clientTools.some((tool) => tool.name === toolName) ? "client" : "unknown";
  };
  const now = rt.now();
  const deadlines = outputDeadlines(rt, collected, { agent, route, now, threadId, runId: run.runId });
  const planned = planStep(collected, { thread: snapshot.thread, run, messageId, now, route, deadlines });
  const inflight = rt.registry.inflight(run.runId);
  // Claimed before the commit so a concurrent driver never mistakes these calls for crash leftovers.
  for (const call of planned.toExecute) inflight.add(call.toolCallId);
  let committed: Committed<{ completed: boolean }>;
  try {
    committed = await rt.writer.commit(
      threadId,
      (state, now) =>
        decideStep(state, { runId: run.runId, messageId, expectedStep: run.step, planned }, now),
      { fence: run.runId, deferEffects: true },
    );
  } catch (error) {
    for (const call of planned.toExecute) inflight.delete(call.toolCallId);
    throw error;
  }
  // The run's end (a step without tool calls) is reported after the step's own end.
  if (committed.value.completed) {
    return { completed: true, hookFailure: null, carryOut: () => rt.writer.carryOut(committed) };
  }
  await rt.writer.carryOut(committed);
  const failures = await Promise.all(
    planned.toExecute.map((call) =>
      runToolCall(rt, {
        threadId,
        runId: run.runId,
        toolCallId: call.toolCallId,
        toolName: call.toolName,
        input: call.input,
        entry: { type: "initial" },
        request,
        agentEntry,
      }),
    ),
  );
  return { completed: false, hookFailure: failures.find((failure) => failure !== null) ?? null };
}

/**
 * Deadlines of the step's client-routed calls whose tool declares one. A deadline function is
 * the tool's own code, so it runs here rather than in the (pure) planner; when it throws or
 * returns an invalid deadline the call fails model-visibly, as other tool bugs do.
 */
function outputDeadlines(
  rt: RuntimeCore,
  collected: CollectedStep,
  step: {
    agent: RuntimeAgentDefinition;
    route: (toolName: string) => ToolRoute;
    now: string;
    threadId: string;
    runId: string;
  },
): Map<string, OutputDeadline> {
  const deadlines = new Map<string, OutputDeadline>();
  for (const item of collected) {
    if (item.kind !== "tool" || item.errorText !== undefined || step.route(item.toolName) !== "output")
      continue;
    const config = registrationOf(step.agent, item.toolName)?.tool.config;
    const declared: unknown = config && "deadline" in config ? config.deadline : undefined;
    if (declared === undefined) continue;
    const { toolCallId, toolName } = item;
    let chosen = declared;
    if (typeof declared === "function") {
      try {
        chosen = declared(item.input);
      } catch (error) {
        rt.reportError({
          error,
          phase: "tool",
          threadId: step.threadId,
          runId: step.runId,
          toolName,
          toolCallId,
        });
        deadlines.set(toolCallId, {
          errorText: `Tool ${toolName} could not choose a deadline for this call: ${getErrorMessage(error)}`,
        });
        continue;
      }
    }
    const resolved = resolveDeadline(chosen, step.now);
    if (!resolved.ok) {
      deadlines.set(toolCallId, {
        errorText: `Tool ${toolName} chose an invalid deadline: ${resolved.message}.`,
      });
    } else if (resolved.deadline) {
      deadlines.set(toolCallId, { deadline: resolved.deadline });
    }
  }
  return deadlines;
}

/**
 * The agent's own registration of `toolName`. Tool names come from models and clients, so a
 * name such as `constructor` or `toString` must never find an inherited `Object.prototype` member.
 */
function registrationOf(
  agent: Pick<RuntimeAgentDefinition, "tools">,
  toolName: string,
): RuntimeToolRegistration | undefined {
  return Object.hasOwn(agent.tools, toolName) ? agent.tools[toolName] : undefined;
}

async function prepareTools(
  run: RunRow,
  agent: RuntimeAgentDefinition,
  request: RequestContext,
): Promise<{ modelTools: ToolSet; historyTools: ToolSet }> {
  const args = await request.resolverArgs();
  const modelTools: ToolSet = {};
  const historyTools: ToolSet = {};
  for (const [name, registration] of Object.entries(agent.tools)) {
    const config = registration.tool.config;
    historyTools[name] = {
      inputSchema: config.inputSchema,
      ...(config.toModelOutput ? { toModelOutput: config.toModelOutput as never } : {}),
    } as ToolSet[string];
    if (!(await resolveEnabled(registration, args))) continue;
    modelTools[name] = {
      description: await resolveDescription(registration, args),
      inputSchema: await cachedSdkSchema(config.inputSchema),
    } as ToolSet[string];
  }
  for (const clientTool of run.clientTools) {
    if (Object.hasOwn(modelTools, clientTool.name) || Object.hasOwn(agent.tools, clientTool.name)) continue;
    modelTools[clientTool.name] = {
      description: clientTool.description,
      inputSchema: jsonSchema(clientTool.inputSchema as never),
    } as ToolSet[string];
  }
  return { modelTools, historyTools };
}

/** Folds a model call's stream into text/reasoning blocks and tool calls, in stream order. */
async function collectStream(
  stream: AsyncIterable<ModelCallPart>,
  options: {
    isRegistered: (toolName: string) => boolean;
    onDelta: (kind: "text" | "reasoning", delta: string, blockId: string) => void;
  },
): Promise<{ collected: CollectedStep; toolCalls: number; streamError: unknown }> {
  const collected: CollectedStep = [];
  const blocks = new Map<string, { kind: "text" | "reasoning"; text: string }>();
  const calls = new Map<string, Extract<CollectedStep[number], { kind: "tool" }>>();
  let streamError: unknown;
  // A later event of the same call (tool-error after tool-call) replaces it in place.
  const setCall = (
    part: Extract<ModelCallPart, { type: "tool-call" | "tool-error" }>,
    errorText: string | undefined,
  ) => {
    const { toolCallId, toolName } = part;
    const next: Extract<CollectedStep[number], { kind: "tool" }> = {
      kind: "tool",
      toolCallId,
      toolName,
      input: safeJson(part.input),
      dynamic: !options.isRegistered(toolName),
      ...(errorText !== undefined ? { errorText } : {}),
    };
    const existing = calls.get(toolCallId);
    if (existing) collected[collected.indexOf(existing)] = next;
    else collected.push(next);
    calls.set(toolCallId, next);
  };
  for await (const part of stream) {
    switch (part.type) {
      case "text-delta":
      case "reasoning-delta": {
        const kind = part.type === "text-delta" ? "text" : "reasoning";
        const key = `${kind}:${part.id}`;
        let block = blocks.get(key);
        if (!block) {
          block = { kind, text: "" };
          blocks.set(key, block);
          collected.push(block);
        }
        block.text += part.text;
        options.onDelta(kind, part.text, part.id);
        break;
      }
      case "tool-call":
        setCall(part, part.invalid ? getErrorMessage(part.error) : undefined);
        break;
      case "tool-error":
        setCall(part, getErrorMessage(part.error));
        break;
      case "error":
        streamError = part.error;
        break;
      default:
        break;
    }
  }
  return { collected, toolCalls: calls.size, streamError };
}

function safeJson(value: unknown): JsonValue | undefined {
  if (value === undefined) return undefined;
  try {
    return normalizeJson(value);
  } catch {
    return null;
  }
}
