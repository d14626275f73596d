import type { DynamicToolUIPart, ToolUIPart, UIDataTypes, UIMessage, UIMessagePart, UITools } from "ai";
import type {
  AgentContract,
  ToolData,
  ToolInput,
  ToolName,
  ToolOutput,
  ToolSuspend,
} from "../definitions/agent-contract.js";
import type { JsonValue } from "../json/json-value.js";
import type { ActionDeadline } from "../state/rows.js";

/** One tool data item on a projected tool part. */
export type PaiToolDataItem<TValue = JsonValue> = {
  id: string;
  value: TValue;
  updatedAt: string;
};

/** Resolution state of one suspension episode; `state` is the discriminant. */
export type PaiSuspensionState<TResume> =
  | { state: "pending" }
  | ({ state: "submitted"; resolvedAt: string } & (undefined extends TResume
      ? { resume?: TResume }
      : { resume: TResume }))
  | { state: "cancelled"; resolvedAt: string }
  | { state: "failed"; resolvedAt: string };

/** One typed suspension episode of a registered tool. */
export type PaiSuspensionView<TAgent, TName extends ToolName<TAgent>> = {
  [TSuspendName in keyof ToolSuspend<TAgent, TName> & string]: {
    actionId: string;
    name: TSuspendName;
    input: ToolSuspend<TAgent, TName>[TSuspendName]["input"];
    suspendedAt: string;
    /** When the wait ends unanswered and how, or null without a deadline. */
    deadline: ActionDeadline | null;
  } & PaiSuspensionState<ToolSuspend<TAgent, TName>[TSuspendName]["resume"]>;
}[keyof ToolSuspend<TAgent, TName> & string];

/** The contract-erased suspension episode of dynamic tools. */
export type PaiUntypedSuspensionView = {
  actionId: string;
  name: string;
  input: unknown;
  suspendedAt: string;
  /** When the wait ends unanswered and how, or null without a deadline. */
  deadline: ActionDeadline | null;
} & PaiSuspensionState<unknown>;

/** Tool data grouped by channel. */
export type PaiToolDataView<TAgent, TName extends ToolName<TAgent>> = {
  readonly [TChannel in keyof ToolData<TAgent, TName> & string]?: readonly PaiToolDataItem<
    ToolData<TAgent, TName>[TChannel]
  >[];
};

/** Set when a run was stopped while this call was unfinished. */

/** PAI sidecars added to a native AI SDK tool part by projection. */
export type PaiToolPartSidecars<TData, TSuspension> = {
  /** Tool data grouped by channel. */
  data: TData;
  /** Every suspension episode of the call, oldest first. */
  suspensions: readonly TSuspension[];
  /** The pending episode, or null. */
  pendingSuspension: Extract<TSuspension, { state: "pending" }> | null;
  /**
   * True when the call was abandoned rather than answered (its action or its run was
   * cancelled); the native part is then `output-error` with the cancellation text.
   */
  cancelled: boolean;
};

/**
 * The native AI SDK `tool-<name>` part of one registered tool, without PAI sidecars: its state
 * arms carry the contract's input and output. For clients that attach their own sidecar types.
 */
export type PaiNativeToolPart<TAgent, TName extends ToolName<TAgent>> = ToolUIPart<{
  [K in TName]: { input: ToolInput<TAgent, K>; output: ToolOutput<TAgent, K> };
}>;

/** A projected `tool-<name>` part, typed from the agent contract. */
export type PaiStaticToolPart<TAgent = AgentContract> = {
  [TName in ToolName<TAgent>]: ToolUIPart<{
    [K in TName]: { input: ToolInput<TAgent, K>; output: ToolOutput<TAgent, K> };
  }> &
    PaiToolPartSidecars<PaiToolDataView<TAgent, TName>, PaiSuspensionView<TAgent, TName>>;
}[ToolName<TAgent>];

/** A projected `dynamic-tool` part (provider, request-time or removed tools). */
export type PaiDynamicToolPart = DynamicToolUIPart &
  PaiToolPartSidecars<
    { readonly [channel: string]: readonly PaiToolDataItem<unknown>[] | undefined },
    PaiUntypedSuspensionView
  >;

/** Any projected PAI tool part. */
export type PaiToolPart<TAgent = AgentContract> = PaiStaticToolPart<TAgent> | PaiDynamicToolPart;

/** An AI SDK UI message whose tool parts carry PAI sidecars. */
export type PaiUIMessage<TAgent = AgentContract, TMetadata = unknown> = Omit<
  UIMessage<TMetadata>,
  "parts"
> & {
  parts: Array<
    | Exclude<UIMessagePart<UIDataTypes, UITools>, { type: `tool-${string}` } | { type: "dynamic-tool" }>
    | PaiToolPart<TAgent>
  >;
};
