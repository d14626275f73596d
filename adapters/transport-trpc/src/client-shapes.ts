// What clients send and receive through the PAI procedures, typed from the agents where a
// contract is known: the submit input, the thread view and its pending actions, watch events.
import type { IsOpenContract, PaiPendingAction } from "@pai/client";
import type { ActionResult, SendResult, WatchEvent } from "@pai/core";
import type {
  ClientActionRow,
  ClientThreadEvent,
  ClientThreadRow,
  ClientThreadView,
  PendingActionData,
} from "@pai/core/protocol";

/**
 * An answer to an action the agents' contract does not name (a frontend-defined client tool's):
 * `untyped: true` says so, and the server validates the payload against the tool's own schema.
 * Compile errors about a missing `untyped` name this type: the action's `name` is not one of
 * the agents' actions (check its spelling), or the action is outside the contract.
 */
export type PaiAnswerOutsideTheContract = { untyped: true; name?: string; payload?: unknown };

/**
 * `actions.submit`'s answer part, typed from the agents: a union discriminated by the action's
 * qualified `name`, so a wrong payload does not compile. An action outside the contract (a
 * frontend-defined client tool's) is answered with `untyped: true`.
 */
export type PaiSubmitAnswer<TAgent> = TAgent extends unknown
  ? IsOpenContract<TAgent> extends true
    ? { name?: string; payload?: unknown; untyped?: boolean }
    :
        | (PaiPendingAction<TAgent> extends infer TAction
            ? TAction extends { name: infer TName; submit: (...args: infer TArgs) => unknown }
              ? undefined extends TArgs[0]
                ? { name: TName; payload?: TArgs[0]; untyped?: false }
                : { name: TName; payload: TArgs[0]; untyped?: false }
              : never
            : never)
        | PaiAnswerOutsideTheContract
  : never;

/** `actions.submit`'s input as a typed tRPC client sees it. */
export type PaiSubmitInput<TAgent> = {
  threadId: string;
  actionId: string;
  idempotencyKey?: string;
  clientTools?: Array<{
    name: string;
    description: string;
    inputSchema: Record<string, unknown>;
    outputSchema?: Record<string, unknown>;
  }>;
  clientData?: unknown;
  /** Answer once the action's run stopped (parked, ended), at most this long (ms, up to 60,000). */
  waitMs?: number;
} & PaiSubmitAnswer<TAgent>;

/**
 * A pending action of the agents as plain data (what `threads.get` lists), discriminated by its
 * qualified `name`: checking `name` narrows `input` to that suspend point's input (or the tool's
 * input for a `tool.output` action), and the narrowed `name` is what a typed `actions.submit`
 * accepts. Actions outside the contract (a frontend-defined client tool's) are still listed at
 * run time; their names match none of these, so keep a default branch when switching on `name`.
 */
export type PaiPendingActionData<TAgent> = TAgent extends unknown
  ? IsOpenContract<TAgent> extends true
    ? PendingActionData
    : PaiPendingAction<TAgent> extends infer TAction
      ? TAction extends { name: infer TName; input: infer TInput }
        ? Omit<PendingActionData, "name" | "input"> & { name: TName; input: TInput }
        : never
      : never
  : never;

/** `threads.get`'s output for these agents: the client view with typed pending actions. */
export type PaiThreadView<TAgent = unknown> =
  PendingActionData extends PaiPendingActionData<TAgent>
    ? ClientThreadView
    : Omit<ClientThreadView, "pending"> & { pending: Array<PaiPendingActionData<TAgent>> };

/** A committed `watch` event as clients receive it: rows without internal fields. */
export type ClientWatchEvent =
  | (Omit<Extract<WatchEvent, { type: "committed" }>, "events"> & { events: ClientThreadEvent[] })
  | Extract<WatchEvent, { type: "live" }>;

/** An item of the view-based `threads.watch`: the whole client view per version, or a live event. */
export type ClientViewEvent<TAgent = unknown> =
  | { type: "state"; version: number; view: PaiThreadView<TAgent> }
  | Extract<WatchEvent, { type: "live" }>;

/**
 * What a call made with `waitMs` adds to its answer: the thread as the client view once the run
 * stopped, or as it stood when `waitMs` passed (`done: false`).
 */
export type PaiSettledView<TAgent = unknown> = { done: boolean; view: PaiThreadView<TAgent> };

/** An action result as clients receive it. */
export type ClientActionResult<TAgent = unknown> = Omit<ActionResult, "action" | "settled"> & {
  action: ClientActionRow;
  settled?: PaiSettledView<TAgent>;
};

/** `threads.send`'s answer as clients receive it. */
export type ClientSendResult<TAgent = unknown> = Omit<SendResult, "settled"> & {
  settled?: PaiSettledView<TAgent>;
};

/** `threads.create`'s answer: the created row, and with `waitMs` the settled thread. */
export type ClientCreatedThread<TAgent = unknown> = ClientThreadRow & { settled?: PaiSettledView<TAgent> };
