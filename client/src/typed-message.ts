import type {
  ActionDeadline,
  AgentContract,
  PaiNativeToolPart,
  PaiToolDataView,
  ToolName,
  ToolSuspend,
} from "@pai/core";
import type {
  ProjectedMessage,
  ProjectedPart,
  ProjectedToolPart,
  SuspensionStateView,
} from "@pai/core/protocol";
import type { ContractOf } from "./pending-action-view.js";
import type { IsOpenContract } from "./typed-pending-action.js";

type Contract<TAgent> = ContractOf<TAgent>;

/**
 * One suspension episode of a registered tool, typed per suspend point. Same runtime shape as
 * core's `SuspensionView`: a submitted episode omits `resume` when none was stored.
 */
export type PaiThreadSuspension<TAgent, TTool extends ToolName<Contract<TAgent>>> = {
  [TPoint in keyof ToolSuspend<Contract<TAgent>, TTool> & string]: {
    actionId: string;
    name: TPoint;
    input: ToolSuspend<Contract<TAgent>, TTool>[TPoint]["input"];
    suspendedAt: string;
    /** When the wait ends unanswered and how, or null without a deadline. */
    deadline: ActionDeadline | null;
  } & SuspensionStateView<ToolSuspend<Contract<TAgent>, TTool>[TPoint]["resume"]>;
}[keyof ToolSuspend<Contract<TAgent>, TTool> & string];

type StaticToolPart<TAgent, TTool extends ToolName<Contract<TAgent>>> = PaiNativeToolPart<
  Contract<TAgent>,
  TTool
> & {
  /** Tool data grouped by channel; channels nobody wrote are absent. */
  data: PaiToolDataView<Contract<TAgent>, TTool>;
  /** Every suspension episode of the call, oldest first. */
  suspensions: readonly PaiThreadSuspension<TAgent, TTool>[];
  /** The episode still waiting, or null. */
  pendingSuspension: Extract<PaiThreadSuspension<TAgent, TTool>, { state: "pending" }> | null;
  /** True when the call was abandoned (its action or run was cancelled) rather than answered. */
  cancelled: ProjectedToolPart["cancelled"];
};

/**
 * A projected tool part as a typed client sees it: `tool-<name>` parts of the contract with
 * input, output, data and suspensions typed (narrow on `type`, then on `state`), and
 * `dynamic-tool` parts (provider, request-time or removed tools) contract-erased.
 */
export type PaiThreadToolPart<TAgent = AgentContract> =
  IsOpenContract<TAgent> extends true
    ? ProjectedToolPart
    :
        | { [TTool in ToolName<Contract<TAgent>>]: StaticToolPart<TAgent, TTool> }[ToolName<Contract<TAgent>>]
        | Extract<ProjectedToolPart, { type: "dynamic-tool" }>;

/** A part of a projected message: native non-tool parts unchanged, tool parts typed. */
export type PaiThreadPart<TAgent = AgentContract> =
  | Exclude<ProjectedPart, { toolCallId: string }>
  | PaiThreadToolPart<TAgent>;

/**
 * A projected message of a thread (`ProjectedMessage`) with its tool parts typed from the
 * agent contract. With no contract it is exactly `ProjectedMessage`.
 */
export type PaiThreadMessage<TAgent = AgentContract> =
  IsOpenContract<TAgent> extends true
    ? ProjectedMessage
    : Omit<ProjectedMessage, "parts"> & { parts: PaiThreadPart<TAgent>[] };
