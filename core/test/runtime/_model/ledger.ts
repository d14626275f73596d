import { type ActionResult, type ActionRow, PaiError } from "@pai/core";
import { expect } from "vitest";
import { IDENTITY, type RuntimeSystem } from "./system.js";

export type Kind = "submit" | "cancel" | "fail";

/** One resolve request as the test sends it. */
export type ResolveRequest = {
  kind: Kind;
  /** submit: the payload; cancel: the reason; fail: the error message. */
  payload: unknown;
  reason: string | null;
  error: string | null;
  key: string | null;
};

/** The accepted resolution of an action, as the request that won saw it. */
export type Winner = ResolveRequest & {
  threadId: string;
  actionId: string;
  toolCallId: string;
  toolName: string;
  actionKind: ActionRow["kind"];
  result: ActionResult;
  /** The command that resolved it, for messages. */
  via: string;
};

/**
 * The model of fast-check's model run: what the runtime accepted, request by request. Every
 * invariant is a statement about the stored state, the hook log and the results requests got
 * back, relative to this record.
 */
export class Ledger {
  readonly winners = new Map<string, Winner>();
  /** Requests (resolves, retries, sends) that were rejected with CONFLICT. */
  rejected = 0;

  static keyOf(threadId: string, actionId: string): string {
    return `${threadId}/${actionId}`;
  }

  winnerOf(threadId: string, actionId: string): Winner | undefined {
    return this.winners.get(Ledger.keyOf(threadId, actionId));
  }

  winnerForCall(toolCallId: string): Winner | undefined {
    for (const winner of this.winners.values()) if (winner.toolCallId === toolCallId) return winner;
    return undefined;
  }

  /** Records an accepted resolution; a second accepted resolution of one action is a violation. */
  record(winner: Winner): void {
    const key = Ledger.keyOf(winner.threadId, winner.actionId);
    const earlier = this.winners.get(key);
    expect(
      earlier,
      `action ${winner.actionId} was resolved twice: first ${describeRequest(earlier)} (${earlier?.via}), then ${describeRequest(winner)} (${winner.via})`,
    ).toBeUndefined();
    this.winners.set(key, winner);
  }

  keyedWinners(): Winner[] {
    return [...this.winners.values()].filter((winner) => winner.key !== null);
  }
}

export function describeRequest(request: ResolveRequest | undefined): string {
  if (!request) return "nothing";
  const detail =
    request.kind === "submit"
      ? JSON.stringify(request.payload)
      : JSON.stringify(request.kind === "cancel" ? request.reason : request.error);
  return `${request.kind} ${detail}${request.key ? ` [key ${request.key}]` : ""}`;
}

/** A resolve request of `kind` with a payload / reason / error unique to `tag`. */
export function request(
  kind: Kind,
  action: Pick<ActionRow, "toolName">,
  tag: string,
  key: string | null,
): ResolveRequest {
  return {
    kind,
    payload:
      kind === "submit"
        ? action.toolName === "pick"
          ? { choice: `choice-${tag}` }
          : { answer: `answer-${tag}` }
        : undefined,
    reason: kind === "cancel" ? `reason-${tag}` : null,
    error: kind === "fail" ? `error-${tag}` : null,
    key,
  };
}

/** Sends one resolve request through the service. */
export function send(
  system: RuntimeSystem,
  action: Pick<ActionRow, "threadId" | "actionId">,
  input: ResolveRequest,
): Promise<ActionResult> {
  const base = {
    identity: IDENTITY,
    threadId: action.threadId,
    actionId: action.actionId,
    ...(input.key !== null ? { idempotencyKey: input.key } : {}),
  };
  const actions = system.service.actions;
  switch (input.kind) {
    case "submit":
      return actions.submit({ ...base, payload: input.payload });
    case "cancel":
      return actions.cancel({ ...base, reason: input.reason! });
    case "fail":
      return actions.fail({ ...base, error: input.error! });
  }
}

export function codeOf(error: unknown): string {
  return PaiError.isInstance(error) ? error.code : `non-PaiError ${String(error)}`;
}

export function stateOf(kind: Kind): ActionRow["state"] {
  return kind === "submit" ? "submitted" : kind === "cancel" ? "cancelled" : "failed";
}

/** `fulfilled` / `CODE: message` per settled request, for messages. */
export function outcomes(settled: PromiseSettledResult<ActionResult>[]): string[] {
  return settled.map((result) =>
    result.status === "fulfilled"
      ? `fulfilled (v${result.value.version})`
      : `${codeOf(result.reason)}: ${(result.reason as Error)?.message ?? String(result.reason)}`,
  );
}
