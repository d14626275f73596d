import type { ToolData, ToolInput, ToolName, ToolOutput, ToolSuspend } from "@pai/core";
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
    "pai-action": [PaiActionDataOf<TAgent>] extends [never] ? PaiActionData : PaiActionDataOf<TAgent>;
  }
>;

type Simplify<T> = { [K in keyof T]: T[K] } & {};

export type { PaiActionData };

/**
 * A pending suspension of the agent, discriminated by `name` (`tool.point`; `toolName` and
 * `suspendName` are its two halves): its input typed by the point's `suspendSchema`, and
 * (type-only) the resume value its `resumeSchema` expects, which `PaiChatTransport.submit` reads.
 */
export type PaiActionDataOf<TAgent> = {
  [K in ToolName<TAgent>]: {
    [P in keyof ToolSuspend<TAgent, K> & string]: Omit<
      PaiActionData,
      "name" | "toolName" | "suspendName" | "input"
    > & {
      name: `${K}.${P}`;
      toolName: K;
      suspendName: P;
      input: ToolSuspend<TAgent, K>[P]["input"];
      readonly "~resume"?: ToolSuspend<TAgent, K>[P]["resume"];
    };
  }[keyof ToolSuspend<TAgent, K> & string];
}[ToolName<TAgent>];

type ActionOf<M> =
  Extract<M extends { parts: Array<infer P> } ? P : never, { type: "data-pai-action" }> extends {
    data: infer D;
  }
    ? D
    : PaiActionData;

/** Names of the suspend points a chat's messages can hold (`string` for an untyped chat). */
export type PaiActionName<M> = ActionOf<M> extends { name: infer N } ? N : string;

/** What answering the suspend point `N` takes. */
export type PaiActionResume<M, N> =
  Extract<ActionOf<M>, { name: N }> extends { readonly "~resume"?: infer R }
    ? unknown extends R
      ? unknown
      : R
    : unknown;
