import type { TypedPendingActionView } from "@pai/client";
import type { ProjectedMessage, ProjectedToolPart, ToolDataItemView } from "@pai/core/protocol";
import type { ReactNode } from "react";
import type { ToolContractLike } from "./contract-types.js";

/**
 * Presentation state of a tool call, derived from the native part, its run and PAI's sidecars:
 * `streaming` while the model writes the input, `waiting` while a pending action waits for an
 * answer, `running` while the backend works on it, then `done`, `error` or `cancelled`.
 */
export type ToolRenderState = "streaming" | "waiting" | "running" | "done" | "error" | "cancelled";

/**
 * A pending action with its input and submit payload narrowed from the tool contract: the
 * `@pai/client` view (`TypedPendingActionView`). Submitting through the React bindings
 * includes this provider session's client-tool snapshot.
 */
export type TypedPendingAction<TName extends string, TInput, TPayload> = TypedPendingActionView<
  TName,
  TInput,
  TPayload
>;

/**
 * The pending action a tool call can have: one arm per suspend point (`tool.point`) and, for
 * tools without backend execute, the output action (`tool.output`).
 */
export type ToolActionView<TContract extends ToolContractLike, TName extends string> =
  | {
      [TPoint in keyof TContract["suspend"] & string]: TypedPendingAction<
        `${TName}.${TPoint}`,
        TContract["suspend"][TPoint]["input"],
        TContract["suspend"][TPoint]["resume"]
      >;
    }[keyof TContract["suspend"] & string]
  | (TContract["hasExecute"] extends true
      ? never
      : TypedPendingAction<`${TName}.output`, TContract["input"], TContract["output"]>);

/** One data channel of a tool call: its records in write order (same id = updated in place). */
export type ToolDataChannel<TValue> = { readonly records: readonly ToolDataItemView<TValue>[] };

/** Tool data grouped by channel. Every channel is present; a channel nobody wrote has no records. */
export type ToolRenderData<TData> = {
  readonly [TChannel in keyof TData & string]: ToolDataChannel<TData[TChannel]>;
};

type DeepPartial<T> = T extends object ? { [K in keyof T]?: DeepPartial<T[K]> } : T;

type RenderBase<TContract extends ToolContractLike, TName extends string> = {
  toolName: TName;
  toolCallId: string;
  data: ToolRenderData<TContract["data"]>;
  /** The native tool part with PAI's sidecars, for anything the derived fields leave out. */
  part: ProjectedToolPart;
  message: ProjectedMessage;
};

/** What a tool renderer receives; `state` discriminates which fields are known. */
export type ToolRenderProps<TContract extends ToolContractLike, TName extends string> = RenderBase<
  TContract,
  TName
> &
  (
    | {
        state: "streaming";
        /** The input parsed so far. */
        input: DeepPartial<TContract["input"]> | undefined;
        output: undefined;
        errorText: undefined;
        action: null;
      }
    | {
        state: "waiting";
        input: TContract["input"];
        output: undefined;
        errorText: undefined;
        /** The action to answer; submitting it continues the run. */
        action: ToolActionView<TContract, TName>;
      }
    | {
        state: "running";
        input: TContract["input"];
        output: undefined;
        errorText: undefined;
        action: null;
      }
    | {
        state: "done";
        input: TContract["input"];
        output: TContract["output"];
        errorText: undefined;
        action: null;
      }
    | {
        state: "error" | "cancelled";
        input: TContract["input"] | undefined;
        output: undefined;
        errorText: string | undefined;
        action: null;
      }
  );

/** A local renderer for one tool. It never leaves the client. */
export type ToolRender<TContract extends ToolContractLike, TName extends string> = (
  props: ToolRenderProps<TContract, TName>,
) => ReactNode;

/** What a client tool's `execute` receives besides the input. */
export type ClientToolExecuteContext<TContract extends ToolContractLike, TName extends string> = {
  threadId: string;
  toolCallId: string;
  /**
   * The output action being answered. Returning a value submits it; call `action.fail(...)`
   * (or `submit`) yourself to answer differently, and nothing more is sent.
   */
  action: TypedPendingAction<`${TName}.output`, TContract["input"], TContract["output"]>;
};

/**
 * Runs a client tool in this client. Its return value is submitted as the tool output. If it
 * throws, the action stays pending for another client, a renderer or an operator to answer.
 */
export type ClientToolExecute<TContract extends ToolContractLike, TName extends string> = (
  input: TContract["input"],
  context: ClientToolExecuteContext<TContract, TName>,
) => TContract["output"] | Promise<TContract["output"]>;

/** Execute and/or render for a client tool. */
export type ClientToolHandlers<TContract extends ToolContractLike, TName extends string> = {
  execute?: ClientToolExecute<TContract, TName>;
  render?: ToolRender<TContract, TName>;
};
