import type { ActionResult, ActionRow } from "@pai/core";
import fc from "fast-check";
import { expect } from "vitest";
import { checkQuiescent, checkSafety } from "./invariants.js";
import {
  codeOf,
  describeRequest,
  type Kind,
  Ledger,
  outcomes,
  type ResolveRequest,
  request,
  send,
  stateOf,
} from "./ledger.js";
import { IDENTITY, type Plan, type RuntimeSystem, SCOPE } from "./system.js";

/** Every command checks the safety invariants after it ran. */
abstract class ModelCommand implements fc.AsyncCommand<Ledger, RuntimeSystem> {
  check(): boolean {
    return true;
  }

  async run(ledger: Ledger, system: RuntimeSystem): Promise<void> {
    await this.act(ledger, system);
    await checkSafety(system, ledger);
  }

  protected abstract act(ledger: Ledger, system: RuntimeSystem): Promise<void>;
  abstract toString(): string;
}

/**
 * Pending actions of every thread, in a stable order; commands pick one by index. When none is
 * stored yet (a run is still on its way to its tool calls), waits for the process to go idle
 * and looks again, so resolve commands rarely miss.
 */
async function pendingActions(system: RuntimeSystem): Promise<ActionRow[]> {
  const read = async () => {
    const all: ActionRow[] = [];
    for (const threadId of system.threadIds) {
      const stored = await system.stored(threadId);
      all.push(...stored.actions.filter((action) => action.state === "pending"));
    }
    return all;
  };
  const now = await read();
  if (now.length > 0) return now;
  await system.waitForIdle();
  return read();
}

function winnerOf(action: ActionRow, input: ResolveRequest, result: ActionResult, via: string) {
  return {
    ...input,
    threadId: action.threadId,
    actionId: action.actionId,
    toolCallId: action.toolCallId,
    toolName: action.toolName,
    actionKind: action.kind,
    result,
    via,
  };
}

/** The result a winner got back describes its own resolution. */
function expectOwnResult(action: ActionRow, input: ResolveRequest, result: ActionResult, what: string) {
  expect(result.action.actionId, `result of ${what}`).toBe(action.actionId);
  expect(result.action.state, `result state of ${what}`).toBe(stateOf(input.kind));
  if (input.kind === "submit")
    expect(result.action.resume, `result answer of ${what}`).toEqual(input.payload);
  expect(result.action.idempotencyKey ?? null, `result key of ${what}`).toBe(input.key);
}

/** Sends a message; `settle` then waits for the thread's work (else the run goes on during later commands). */
export class SendCommand extends ModelCommand {
  constructor(
    readonly thread: number,
    readonly plan: Plan,
    readonly cancelPending: boolean,
    readonly settle: boolean,
  ) {
    super();
  }

  protected async act(ledger: Ledger, system: RuntimeSystem) {
    const threadId = system.threadIds[this.thread % system.threadIds.length]!;
    const before = await system.stored(threadId);
    const active = before.runs.find((run) => run.status === "running" || run.status === "waiting");
    const mustStart =
      (!active && !before.runs.some((run) => run.status === "queued")) ||
      (active?.status === "waiting" && this.cancelPending);
    try {
      await system.service.threads.send({
        identity: IDENTITY,
        threadId,
        message: { text: `plan:${this.plan}` },
        cancelPending: this.cancelPending,
      });
    } catch (error) {
      ledger.rejected++;
      expect(codeOf(error), `send rejected with ${String(error)}`).toBe("CONFLICT");
      expect(mustStart, `send was rejected although the thread could start a run: ${String(error)}`).toBe(
        false,
      );
    }
    if (this.settle) await system.runtime.waitForIdle(threadId);
  }

  toString() {
    return `send(t${this.thread}, plan:${this.plan}${this.cancelPending ? ", cancelPending" : ""}${this.settle ? "" : ", no-wait"})`;
  }
}

/** `copies` concurrent trusted triggers: none conflicts, each starts a run or queues one. */
export class TriggerCommand extends ModelCommand {
  constructor(
    readonly thread: number,
    readonly plan: Plan,
    readonly copies = 1,
  ) {
    super();
  }

  protected async act(_ledger: Ledger, system: RuntimeSystem) {
    const threadId = system.threadIds[this.thread % system.threadIds.length]!;
    const results = await Promise.allSettled(
      Array.from({ length: this.copies }, () =>
        system.runtime.pai.trusted.trigger({
          threadId,
          scope: SCOPE,
          identity: IDENTITY,
          notification: `plan:${this.plan}`,
        }),
      ),
    );
    const runIds = results.map((result) =>
      result.status === "fulfilled"
        ? result.value.runId
        : `${codeOf(result.reason)}: ${String(result.reason)}`,
    );
    const stored = await system.stored(threadId);
    for (const runId of runIds) {
      expect(
        stored.runs.some((run) => run.runId === runId),
        `a trigger never conflicts and always records its run: ${runIds.join(" | ")}`,
      ).toBe(true);
    }
  }

  toString() {
    return `trigger(t${this.thread}, plan:${this.plan}${this.copies > 1 ? ` x${this.copies}` : ""})`;
  }
}

/**
 * N concurrent resolutions of one pending action, each different and without a key (N = 1 is a
 * plain submit / cancel / fail, optionally with a key): exactly one is accepted, the rest get
 * CONFLICT and change nothing.
 */
export class ResolveBurstCommand extends ModelCommand {
  constructor(
    readonly pick: number,
    readonly kinds: Kind[],
    readonly keyed: boolean,
  ) {
    super();
  }

  protected async act(ledger: Ledger, system: RuntimeSystem) {
    const pending = await pendingActions(system);
    if (pending.length === 0) return;
    const action = pending[this.pick % pending.length]!;
    const useKey = this.keyed && this.kinds.length === 1;
    const requests = this.kinds.map((kind) =>
      request(kind, action, system.tag(), useKey ? system.key() : null),
    );
    const settled = await Promise.allSettled(requests.map((input) => send(system, action, input)));
    const what = `${this} on ${action.actionId} (${action.name}): ${requests.map(describeRequest).join(", ")} -> ${outcomes(settled).join(" | ")}`;
    const winners = settled.flatMap((result, index) =>
      result.status === "fulfilled" ? [{ input: requests[index]!, result: result.value }] : [],
    );
    for (const { input, result } of winners) ledger.record(winnerOf(action, input, result, this.toString()));
    const losers = settled.flatMap((result) => (result.status === "rejected" ? [codeOf(result.reason)] : []));
    ledger.rejected += losers.length;
    expect(losers, `every losing request gets CONFLICT: ${what}`).toEqual(losers.map(() => "CONFLICT"));
    expect(winners.length, `exactly one of the concurrent requests is accepted: ${what}`).toBe(1);
    expectOwnResult(action, winners[0]!.input, winners[0]!.result, what);
  }

  toString() {
    const counts = this.kinds.join("+");
    return this.kinds.length === 1
      ? `${this.kinds[0]}(#${this.pick}${this.keyed ? ", keyed" : ""})`
      : `burst(#${this.pick}, ${counts})`;
  }
}

/**
 * N concurrent copies of one request carrying the same idempotency key: all succeed with the
 * same `{ action, version }` as the one that won (a retry that overlaps the original).
 */
export class KeyedBurstCommand extends ModelCommand {
  constructor(
    readonly pick: number,
    readonly kind: Kind,
    readonly copies: number,
  ) {
    super();
  }

  protected async act(ledger: Ledger, system: RuntimeSystem) {
    const pending = await pendingActions(system);
    if (pending.length === 0) return;
    const action = pending[this.pick % pending.length]!;
    const input = request(this.kind, action, system.tag(), system.key());
    const settled = await Promise.allSettled(
      Array.from({ length: this.copies }, () => send(system, action, input)),
    );
    const what = `${this} on ${action.actionId} (${action.name}): ${describeRequest(input)} x${this.copies} -> ${outcomes(settled).join(" | ")}`;
    const fulfilled = settled.flatMap((result) => (result.status === "fulfilled" ? [result.value] : []));
    if (fulfilled.length > 0) ledger.record(winnerOf(action, input, fulfilled[0]!, this.toString()));
    expect(
      outcomes(settled),
      `every concurrent request with the winner's idempotency key gets the winner's result: ${what}`,
    ).toEqual(settled.map(() => `fulfilled (v${fulfilled[0]?.version})`));
    for (const result of fulfilled) {
      expect(result, `same-key requests get one identical result: ${what}`).toEqual(fulfilled[0]);
    }
    expectOwnResult(action, input, fulfilled[0]!, what);
  }

  toString() {
    return `keyed-burst(#${this.pick}, ${this.kind} x${this.copies})`;
  }
}

/**
 * A later request with a winner's idempotency key: the same kind gets the winner's result; a
 * different kind, or the same kind with another key, gets CONFLICT.
 */
export class RetryCommand extends ModelCommand {
  constructor(
    readonly pick: number,
    readonly variant: "same" | "other-key" | "other-kind",
  ) {
    super();
  }

  protected async act(ledger: Ledger, system: RuntimeSystem) {
    const keyed = ledger.keyedWinners();
    if (keyed.length === 0) return;
    const winner = keyed[this.pick % keyed.length]!;
    const action = { threadId: winner.threadId, actionId: winner.actionId };
    const input: ResolveRequest =
      this.variant === "same"
        ? { ...winner }
        : this.variant === "other-key"
          ? { ...winner, key: system.key() }
          : {
              ...request(winner.kind === "submit" ? "cancel" : "submit", winner, system.tag(), winner.key),
            };
    const what = `${this} of ${describeRequest(winner)} on ${winner.actionId} (won via ${winner.via})`;
    if (this.variant === "same") {
      const result = await send(system, action, input);
      expect(result, `a retry with the winner's key gets the winner's result: ${what}`).toEqual(
        winner.result,
      );
      return;
    }
    let code = "fulfilled";
    try {
      await send(system, action, input);
    } catch (error) {
      code = codeOf(error);
    }
    ledger.rejected++;
    expect(code, `a request that did not win gets CONFLICT: ${what}`).toBe("CONFLICT");
  }

  toString() {
    return `retry(#${this.pick}, ${this.variant})`;
  }
}

/**
 * Submits one pending action while, concurrently, its thread's run is cancelled (threads.cancel)
 * or replaced (send with cancelPending). Either may come first: the submit is accepted or gets
 * CONFLICT, and whatever it got is what storage and the observers show.
 */
export class SubmitVersusCancelCommand extends ModelCommand {
  constructor(
    readonly pick: number,
    readonly canceller: "cancel-run" | "send-cancel-pending",
  ) {
    super();
  }

  protected async act(ledger: Ledger, system: RuntimeSystem) {
    const pending = await pendingActions(system);
    if (pending.length === 0) return;
    const action = pending[this.pick % pending.length]!;
    const input = request("submit", action, system.tag(), null);
    const cancel =
      this.canceller === "cancel-run"
        ? system.service.threads.cancel({ identity: IDENTITY, threadId: action.threadId, reason: "stop" })
        : system.service.threads.send({
            identity: IDENTITY,
            threadId: action.threadId,
            message: { text: "plan:text" },
            cancelPending: true,
          });
    const [submitted, cancelled] = await Promise.allSettled([send(system, action, input), cancel]);
    const what = `${this} on ${action.actionId} (${action.name}): submit -> ${outcomes([submitted]).join("")}, ${this.canceller} -> ${cancelled.status === "fulfilled" ? "fulfilled" : `${codeOf(cancelled.reason)}: ${String(cancelled.reason)}`}`;
    if (submitted.status === "fulfilled") {
      ledger.record(winnerOf(action, input, submitted.value, this.toString()));
      expectOwnResult(action, input, submitted.value, what);
    } else {
      ledger.rejected++;
      expect(codeOf(submitted.reason), `a submit that lost to a cancel gets CONFLICT: ${what}`).toBe(
        "CONFLICT",
      );
    }
    if (cancelled.status === "rejected") {
      expect(this.canceller, `threads.cancel never fails: ${what}`).toBe("send-cancel-pending");
      expect(codeOf(cancelled.reason), `a send that found the run busy gets CONFLICT: ${what}`).toBe(
        "CONFLICT",
      );
    }
    expect(
      submitted.status === "fulfilled" || cancelled.status === "fulfilled",
      `one of the two must take effect: ${what}`,
    ).toBe(true);
  }

  toString() {
    return `submit-vs-${this.canceller}(#${this.pick})`;
  }
}

/** Submits every pending action of one thread at once (different actions): all are accepted. */
export class SubmitAllCommand extends ModelCommand {
  constructor(readonly thread: number) {
    super();
  }

  protected async act(ledger: Ledger, system: RuntimeSystem) {
    const threadId = system.threadIds[this.thread % system.threadIds.length]!;
    const pending = (await pendingActions(system)).filter((action) => action.threadId === threadId);
    if (pending.length === 0) return;
    const requests = pending.map((action) => request("submit", action, system.tag(), null));
    const settled = await Promise.allSettled(
      pending.map((action, index) => send(system, action, requests[index]!)),
    );
    const what = `${this} on ${pending.map((action) => action.actionId).join(", ")} -> ${outcomes(settled).join(" | ")}`;
    settled.forEach((result, index) => {
      if (result.status === "fulfilled") {
        ledger.record(winnerOf(pending[index]!, requests[index]!, result.value, this.toString()));
      }
    });
    expect(
      outcomes(settled).map((text) => text.split(" ")[0]),
      `different actions never conflict: ${what}`,
    ).toEqual(settled.map(() => "fulfilled"));
  }

  toString() {
    return `submit-all(t${this.thread})`;
  }
}

export class CancelRunCommand extends ModelCommand {
  constructor(readonly thread: number) {
    super();
  }

  protected async act(_ledger: Ledger, system: RuntimeSystem) {
    const threadId = system.threadIds[this.thread % system.threadIds.length]!;
    const before = await system.stored(threadId);
    const active = before.runs.find((run) => run.status === "running" || run.status === "waiting");
    await system.service.threads.cancel({ identity: IDENTITY, threadId, reason: "stop" });
    if (!active) return;
    const after = await system.stored(threadId);
    const run = after.runs.find((candidate) => candidate.runId === active.runId);
    expect(
      run?.status,
      `the run active before threads.cancel has ended after it (${active.runId} was ${active.status})`,
    ).toSatisfy((status: string | undefined) =>
      ["cancelled", "completed", "failed"].includes(String(status)),
    );
  }

  toString() {
    return `cancel-run(t${this.thread})`;
  }
}

export class RestartCommand extends ModelCommand {
  protected async act(_ledger: Ledger, system: RuntimeSystem) {
    await system.restart();
  }

  toString() {
    return "restart";
  }
}

/** Waits until the process has no work in flight, then checks the quiescent invariants too. */
export class WaitIdleCommand extends ModelCommand {
  protected async act(ledger: Ledger, system: RuntimeSystem) {
    await checkQuiescent(system, ledger);
  }

  toString() {
    return "wait-idle";
  }
}

const thread = fc.nat({ max: 1 });
const pick = fc.nat({ max: 7 });
const plan = fc.constantFrom<Plan>("pick", "approve", "both", "both", "text");
const kind = fc.constantFrom<Kind>("submit", "cancel", "fail");
const burstKind = fc.constantFrom<Kind>("submit", "submit", "submit", "cancel", "fail");

/**
 * The command arbitraries. `concurrent: false` leaves out every command that sends overlapping
 * requests for one action, which is what the current defects need to show.
 */
export function commandArbitraries(options: { concurrent: boolean }) {
  const send = fc
    .tuple(thread, plan, fc.boolean(), fc.boolean())
    .map(([t, p, cancelPending, settle]) => new SendCommand(t, p, cancelPending, settle));
  const resolveOne = fc
    .tuple(pick, kind, fc.boolean())
    .map(([p, k, keyed]) => new ResolveBurstCommand(p, [k], keyed));
  const sequential: fc.Arbitrary<fc.AsyncCommand<Ledger, RuntimeSystem>>[] = [
    send,
    send,
    send,
    fc.tuple(thread, plan).map(([t, p]) => new TriggerCommand(t, p)),
    resolveOne,
    resolveOne,
    resolveOne,
    fc
      .tuple(
        pick,
        fc.constantFrom("same" as const, "same" as const, "other-key" as const, "other-kind" as const),
      )
      .map(([p, variant]) => new RetryCommand(p, variant)),
    thread.map((t) => new CancelRunCommand(t)),
    fc.constant(new RestartCommand()),
    fc.constant(new WaitIdleCommand()),
  ];
  if (!options.concurrent) return sequential;
  return [
    ...sequential,
    // Same action, different payloads, no key.
    fc
      .tuple(pick, fc.integer({ min: 2, max: 6 }))
      .map(([p, n]) => new ResolveBurstCommand(p, Array<Kind>(n).fill("submit"), false)),
    fc
      .tuple(pick, fc.integer({ min: 2, max: 6 }))
      .map(([p, n]) => new ResolveBurstCommand(p, Array<Kind>(n).fill("submit"), false)),
    // Submit, cancel and fail racing for one action.
    fc
      .tuple(pick, fc.array(burstKind, { minLength: 2, maxLength: 5 }))
      .map(([p, kinds]) => new ResolveBurstCommand(p, kinds, false)),
    // Same action, same key, same payload: a retry overlapping the original.
    fc.tuple(pick, kind, fc.integer({ min: 2, max: 6 })).map(([p, k, n]) => new KeyedBurstCommand(p, k, n)),
    fc.tuple(pick, kind, fc.integer({ min: 2, max: 6 })).map(([p, k, n]) => new KeyedBurstCommand(p, k, n)),
    // A submit racing the run's cancellation.
    fc
      .tuple(pick, fc.constantFrom("cancel-run" as const, "send-cancel-pending" as const))
      .map(([p, canceller]) => new SubmitVersusCancelCommand(p, canceller)),
    // Different actions of one run at once, and runs started at once.
    thread.map((t) => new SubmitAllCommand(t)),
    fc.tuple(thread, plan, fc.integer({ min: 2, max: 3 })).map(([t, p, n]) => new TriggerCommand(t, p, n)),
  ];
}

export { Ledger };
