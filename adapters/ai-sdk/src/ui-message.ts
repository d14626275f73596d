import type { ToolData, ToolInput, ToolName, ToolOutput } from "@pai/core";
import type { UIMessage } from "ai";
import type { PaiActionData } from "./server/run-chunks.js";

/**
 * An agent as the AI SDK's `UIMessage` generic: its tools' inputs and outputs, its tools' data
 * channels as `data-<channel>` parts, and `data-pai-action` for pending suspensions. Pass it to
 * `useChat<PaiUIMessage<typeof agent>>` so tool and data parts narrow without hand-written types.
 */
export type PaiUIMessage<TAgent, TMetadata = unknown> = UIMessage<
  TMetadata,
  PaiUIDataTypes<TAgent>,
  PaiUITools<TAgent>
>;

export type PaiUITools<TAgent> = {
  [K in ToolName<TAgent>]: { input: ToolInput<TAgent, K>; output: ToolOutput<TAgent, K> };
};

type UnionToIntersection<U> = (U extends unknown ? (value: U) => void : never) extends (
  value: infer I,
) => void
  ? I
  : never;

/** Every data channel of every tool of the agent, by channel name. */
export type PaiUIDataTypes<TAgent> = Simplify<
  UnionToIntersection<{ [K in ToolName<TAgent>]: ToolData<TAgent, K> }[ToolName<TAgent>]> & {
    "pai-action": PaiActionData;
  }
>;

type Simplify<T> = { [K in keyof T]: T[K] } & {};

export type { PaiActionData };
