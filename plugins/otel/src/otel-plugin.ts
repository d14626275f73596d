import {
  type Attributes,
  type Context,
  context,
  type Span,
  SpanKind,
  SpanStatusCode,
  type Tracer,
  trace,
} from "@opentelemetry/api";
import { definePlugin, type RuntimeEvent, type RuntimeEventOf } from "@pai/core";

/** Options of `otelPlugin`. */
export type OtelPluginOptions = {
  /** Tracer to use. Default: `trace.getTracer("@pai/otel")` from the global provider. */
  tracer?: Tracer;
  /**
   * Record model-visible error texts of failed tool calls and runs as span status messages.
   * Off by default: those texts can quote tool inputs or outputs.
   */
  recordErrorText?: boolean;
  /** Extra attributes for every span (service-level facts, never per-request payloads). */
  attributes?: Attributes;
};

/** Span names the plugin emits. */
export const PAI_SPAN_NAMES = {
  run: "pai.run",
  step: "pai.step",
  model: "pai.model",
  tool: "pai.tool",
  suspension: "pai.suspension",
  actionResolve: "pai.action.resolve",
} as const;

type RunSpans = {
  span: Span;
  context: Context;
  steps: Map<number, { span: Span; context: Context; model?: Span }>;
  currentStep?: number;
  tools: Map<string, Span>;
  suspensions: Map<string, { span: Span; context: Context }>;
};

const GENERIC_TOOL_ERROR = "The tool call failed.";

/**
 * OpenTelemetry tracing for PAI: spans for runs, model steps, model calls, tool executions,
 * suspensions (pending actions) and their responses. Spans carry ids only (thread, run,
 * agent, tool call, action); inputs, outputs and messages are never recorded.
 *
 * A run's span stays open while it waits on pending actions and ends when the run ends. If a
 * run continues in another process, that process opens a new `pai.run` span for it, marked
 * `pai.run.resumed`.
 */
export function otelPlugin(options: OtelPluginOptions = {}) {
  const tracer = () => options.tracer ?? trace.getTracer("@pai/otel");
  const runs = new Map<string, RunSpans>();

  const base = (event: RuntimeEvent): Attributes => ({
    ...options.attributes,
    "pai.thread.id": event.threadId,
    "pai.run.id": event.runId,
    "pai.agent.id": event.agentId,
  });

  const startRun = (event: RuntimeEvent, resumed: boolean): RunSpans => {
    const span = tracer().startSpan(
      PAI_SPAN_NAMES.run,
      {
        kind: SpanKind.INTERNAL,
        attributes: { ...base(event), ...(resumed ? { "pai.run.resumed": true } : {}) },
      },
      context.active(),
    );
    const spans: RunSpans = {
      span,
      context: trace.setSpan(context.active(), span),
      steps: new Map(),
      tools: new Map(),
      suspensions: new Map(),
    };
    runs.set(event.runId, spans);
    return spans;
  };

  const runOf = (event: RuntimeEvent) => runs.get(event.runId) ?? startRun(event, true);

  const fail = (span: Span, message: string) => span.setStatus({ code: SpanStatusCode.ERROR, message });

  const handlers: { [K in RuntimeEvent["type"]]: (event: RuntimeEventOf<K>) => void } = {
    "run-start": (event) => {
      if (!runs.has(event.runId)) startRun(event, false);
    },
    "run-end": (event) => {
      const run = runs.get(event.runId);
      if (!run) return;
      runs.delete(event.runId);
      for (const step of run.steps.values()) {
        step.model?.end();
        step.span.end();
      }
      for (const span of run.tools.values()) span.end();
      for (const suspension of run.suspensions.values()) {
        suspension.span.setAttribute("pai.action.resolution", "abandoned");
        suspension.span.end();
      }
      run.span.setAttribute("pai.run.status", event.status);
      if (event.status === "failed") {
        fail(run.span, options.recordErrorText && event.error ? event.error : "The run failed.");
      } else if (event.status === "completed") {
        run.span.setStatus({ code: SpanStatusCode.OK });
      }
      run.span.end();
    },
    "step-start": (event) => {
      const run = runOf(event);
      const span = tracer().startSpan(
        PAI_SPAN_NAMES.step,
        { attributes: { ...base(event), "pai.step": event.step } },
        run.context,
      );
      run.steps.set(event.step, { span, context: trace.setSpan(run.context, span) });
      run.currentStep = event.step;
    },
    "step-end": (event) => {
      const run = runs.get(event.runId);
      const step = run?.steps.get(event.step);
      if (!run || !step) return;
      step.model?.end();
      if (event.error !== undefined) fail(step.span, "The step failed.");
      step.span.end();
      run.steps.delete(event.step);
      if (run.currentStep === event.step) run.currentStep = undefined;
    },
    "model-start": (event) => {
      const run = runOf(event);
      const step = run.steps.get(event.step);
      const span = tracer().startSpan(
        PAI_SPAN_NAMES.model,
        {
          kind: SpanKind.CLIENT,
          attributes: {
            ...base(event),
            "pai.step": event.step,
            "gen_ai.system": event.provider,
            "gen_ai.request.model": event.modelId,
          },
        },
        step?.context ?? run.context,
      );
      if (step) step.model = span;
      else span.end();
    },
    "model-end": (event) => {
      const step = runs.get(event.runId)?.steps.get(event.step);
      const span = step?.model;
      if (!step || !span) return;
      span.setAttribute("pai.model.tool_calls", event.toolCalls);
      if (event.error !== undefined) fail(span, "The model call failed.");
      span.end();
      step.model = undefined;
    },
    "tool-start": (event) => {
      const run = runOf(event);
      const step = run.currentStep === undefined ? undefined : run.steps.get(run.currentStep);
      const span = tracer().startSpan(
        PAI_SPAN_NAMES.tool,
        {
          attributes: {
            ...base(event),
            "pai.tool.name": event.toolName,
            "pai.tool.call.id": event.toolCallId,
            "pai.tool.entry": event.entry,
            "gen_ai.tool.name": event.toolName,
            "gen_ai.tool.call.id": event.toolCallId,
          },
        },
        step?.context ?? run.context,
      );
      run.tools.set(event.toolCallId, span);
    },
    "tool-end": (event) => {
      const run = runs.get(event.runId);
      const span = run?.tools.get(event.toolCallId);
      if (!run || !span) return;
      run.tools.delete(event.toolCallId);
      span.setAttribute("pai.tool.outcome", event.outcome);
      if (event.outcome === "error") {
        fail(span, options.recordErrorText && event.errorText ? event.errorText : GENERIC_TOOL_ERROR);
      }
      span.end();
    },
    suspend: (event) => {
      const run = runOf(event);
      const toolSpan = run.tools.get(event.toolCallId);
      const span = tracer().startSpan(
        PAI_SPAN_NAMES.suspension,
        {
          attributes: {
            ...base(event),
            "pai.tool.name": event.toolName,
            "pai.tool.call.id": event.toolCallId,
            "pai.action.id": event.actionId,
            "pai.action.name": event.actionName,
            "pai.action.kind": event.actionKind,
          },
          ...(toolSpan ? { links: [{ context: toolSpan.spanContext() }] } : {}),
        },
        run.context,
      );
      run.suspensions.set(event.actionId, { span, context: trace.setSpan(run.context, span) });
    },
    "action-resolved": (event) => {
      const run = runOf(event);
      const suspension = run.suspensions.get(event.actionId);
      const span = tracer().startSpan(
        PAI_SPAN_NAMES.actionResolve,
        {
          kind: SpanKind.SERVER,
          attributes: {
            ...base(event),
            "pai.tool.name": event.toolName,
            "pai.tool.call.id": event.toolCallId,
            "pai.action.id": event.actionId,
            "pai.action.name": event.actionName,
            "pai.action.kind": event.actionKind,
            "pai.action.resolution": event.resolution,
          },
        },
        suspension?.context ?? run.context,
      );
      span.end();
      if (suspension) {
        run.suspensions.delete(event.actionId);
        suspension.span.setAttribute("pai.action.resolution", event.resolution);
        suspension.span.end();
      }
    },
  };

  return definePlugin({
    id: "pai.otel",
    hooks: {
      onEvent: (event) => {
        (handlers[event.type] as (event: RuntimeEvent) => void)(event);
      },
    },
  });
}
