import { isToolPart } from "@pai/client";
import { PaiError } from "@pai/core";
import type { ProjectedMessage, ProjectedPart, ProjectedToolPart } from "@pai/core/protocol";
import { type ReactNode, useContext, useSyncExternalStore } from "react";
import { ThreadIdContext, usePaiSession } from "./contexts.js";
import { deriveToolState } from "./derive-tool-state.js";
import type { UntypedRender } from "./pai-session.js";
import type { ToolRenderProps, ToolRenderState } from "./render-types.js";
import { toRenderData } from "./tool-data-view.js";
import { useThreadState } from "./use-thread.js";

/** Contract-erased render props, as `ToolPart` builds them. */
export type AnyToolRenderProps = ToolRenderProps<
  { input: unknown; output: unknown; data: Record<string, unknown>; suspend: Record<string, never> },
  string
>;

export type ToolPartProps = {
  message: ProjectedMessage;
  part: ProjectedPart;
  /** Defaults to the nearest `ThreadProvider`'s thread. */
  threadId?: string;
  /** Rendered when no renderer is registered for this tool (default: nothing). */
  fallback?: ReactNode | ((props: AnyToolRenderProps) => ReactNode);
};

/** The tool name of a native tool part (`tool-<name>` or a `dynamic-tool`'s `toolName`). */
export function toolNameOf(part: ProjectedToolPart): string {
  return part.type === "dynamic-tool"
    ? (part as { toolName: string }).toolName
    : part.type.slice("tool-".length);
}

// Renderers run as this component so hooks inside a render function have a stable owner.
function RenderHost({ render, props }: { render: UntypedRender; props: AnyToolRenderProps }): ReactNode {
  return (render as (props: AnyToolRenderProps) => ReactNode)(props);
}

/**
 * Renders one tool part with the renderer registered for its tool (hook registrations scoped
 * to the thread, then provider-wide ones, then the agent binding's config). Non-tool parts
 * render nothing.
 */
export function ToolPart({ message, part, threadId, fallback }: ToolPartProps): ReactNode {
  const session = usePaiSession("<ToolPart>");
  const contextId = useContext(ThreadIdContext);
  const id = threadId ?? contextId;
  if (!id) {
    throw new PaiError(
      "INVALID_DEFINITION",
      "<ToolPart> needs a thread: render it inside <ThreadProvider threadId={...}> or pass threadId.",
    );
  }
  useSyncExternalStore(session.subscribe, session.getVersion, session.getVersion);
  const state = useThreadState(session, id);
  if (!isToolPart(part)) return null;
  const toolName = toolNameOf(part);
  const pending = state.pending.find((action) => action.origin.toolCallId === part.toolCallId) ?? null;
  const run =
    state.run && state.run.messageId === message.id
      ? state.run
      : state.run
        ? { status: "completed" as const }
        : null;
  const derived: ToolRenderState = deriveToolState(part, run, pending !== null);
  const native = part as { input?: unknown; output?: unknown; errorText?: string };
  const props = {
    toolName,
    toolCallId: part.toolCallId,
    data: toRenderData(part.data),
    part,
    message,
    state: derived,
    input: native.input,
    output: derived === "done" ? native.output : undefined,
    errorText: derived === "error" || derived === "cancelled" ? native.errorText : undefined,
    action: derived === "waiting" && pending ? session.wrapAction(id, pending) : null,
  } as AnyToolRenderProps;
  const agentId = state.thread?.agentId;
  const render = agentId ? session.resolve(id, agentId, toolName, "render")?.render() : undefined;
  if (render) return <RenderHost render={render} props={props} />;
  return typeof fallback === "function" ? fallback(props) : (fallback ?? null);
}
