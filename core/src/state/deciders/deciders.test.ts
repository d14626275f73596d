import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { ActionRow, RunRow } from "../rows.js";
import { applyThreadEvent, applyThreadEvents, type ThreadSnapshot } from "../snapshot.js";
import { withWakeAt } from "../wake.js";
import { decideSettle, decideStep, planStep } from "./call-deciders.js";
import type { Decision } from "./decision.js";
import { decideResolve, type ResolveInput } from "./resolve-deciders.js";
import {
  decideClaimResume,
  decideInterrupt,
  decideNextMove,
  decideStartRun,
  type StartRunInput,
  shouldResendRun,
} from "./run-deciders.js";
import { decideCreateThread } from "./thread-deciders.js";

const NOW = "2026-01-01T00:00:00.000Z";

function empty(): ThreadSnapshot {
  return {
    thread: {
      threadId: "t",
      scopeKey: "s",
      userKey: null,
      agentId: "a",
      title: null,
      status: "idle",
      version: 1,
      activeRunId: null,
      metadata: null,
      createdAt: NOW,
      updatedAt: NOW,
    },
    messages: [],
    runs: [],
    actions: [],
    toolData: [],
  };
}

function apply<T>(state: ThreadSnapshot, decision: Decision<T>): ThreadSnapshot {
  if (!decision.ok) throw new Error(decision.message);
  const next = decision.events.reduce(applyThreadEvent, state);
  return { ...next, thread: { ...next.thread, version: state.thread.version + 1 } };
}

const start = (runId: string, patch: Partial<StartRunInput> = {}): StartRunInput => ({
  runId,
  message: null,
  trigger: { type: "message", messageId: "m" },
  clientTools: [],
  clientData: null,
  identity: null,
  queueIfBusy: false,
  cancelPending: false,
  ...patch,
});

/** A thread whose run `r1` waits on one output action `call-1`. */
function waitingOnOutput(): ThreadSnapshot {
  let state = apply(empty(), decideStartRun(empty(), start("r1"), NOW));
  const run = state.runs[0] as RunRow;
  const planned = planStep(
    [{ kind: "tool", toolCallId: "call-1", toolName: "pick", input: {}, dynamic: false }],
    { thread: state.thread, run, messageId: "m1", now: NOW, route: () => "output" },
  );
  state = apply(state, decideStep(state, { runId: "r1", messageId: "m1", expectedStep: 0, planned }, NOW));
  return state;
}

const submit = (key: string | null, payload: unknown = { choice: "a" }): ResolveInput => ({
  actionId: "call-1",
  kind: "submit",
  resolution: {
    type: "submit",
    payload: payload as never,
    outcome: { type: "output", output: payload as never },
  },
  idempotencyKey: key,
  finish: { type: "none" },
});

describe("decideStartRun", () => {
  it("starts a run on an idle thread, taking its lease in the commit and driving it after", () => {
    const decision = decideStartRun(empty(), start("r1"), NOW);
    expect(decision.ok && decision.effects).toEqual([
      { type: "take-lease", runId: "r1" },
      { type: "run-started", runId: "r1" },
    ]);
  });

  it("refuses a busy thread, queues a trigger, and cancels a waiting run for cancelPending", () => {
    const waiting = waitingOnOutput();
    expect(waiting.runs[0]?.status).toBe("waiting");
    const refused = decideStartRun(waiting, start("r2"), NOW);
    expect(!refused.ok && refused.code).toBe("CONFLICT");
    const queued = decideStartRun(waiting, start("r2", { queueIfBusy: true }), NOW);
    expect(queued.ok && queued.value).toEqual({ queued: true });
    expect(queued.ok && queued.effects).toEqual([]);
    const replaced = decideStartRun(waiting, start("r2", { cancelPending: true }), NOW);
    expect(replaced.ok && replaced.effects.map((effect) => effect.type)).toEqual([
      "run-ended",
      "take-lease",
      "run-started",
    ]);
  });
});

describe("decideCreateThread", () => {
  const created = { scopeKey: "s", userKey: "u", agentId: "a", title: "T", metadata: null };

  it("creates the thread alone, with no effect to carry out", () => {
    const decision = decideCreateThread(empty(), created, NOW);
    expect(decision.ok && decision.events.map((event) => event.type)).toEqual(["thread-updated"]);
    expect(decision.ok && decision.effects).toEqual([]);
  });

  it("with a first message, starts its run in the same decision, as decideStartRun does on the new thread", () => {
    const message = {
      threadId: "t",
      messageId: "m",
      role: "user" as const,
      message: { id: "m", role: "user" as const, parts: [{ type: "text" as const, text: "hi" }] },
      position: 0,
      runId: null,
      createdAt: NOW,
      updatedAt: NOW,
    };
    const decision = decideCreateThread(empty(), { ...created, start: start("r1", { message }) }, NOW);
    if (!decision.ok) throw new Error(decision.message);
    expect(decision.events[0]).toMatchObject({
      type: "thread-updated",
      thread: { status: "idle", userKey: "u" },
    });
    expect(decision.effects).toEqual([
      { type: "take-lease", runId: "r1" },
      { type: "run-started", runId: "r1" },
    ]);
    const state = apply(empty(), decision);
    expect(state.thread).toMatchObject({ status: "running", activeRunId: "r1", title: "T" });
    // The decider places the message: positions count from 1, as for a message sent later.
    expect(state.messages.map((row) => [row.messageId, row.position])).toEqual([["m", 1]]);
    expect(state.runs.map((run) => run.status)).toEqual(["running"]);
  });
});

describe("decideResolve", () => {
  it("wakes the parked run with its lease, reports the answer and drives the run", () => {
    const decision = decideResolve(waitingOnOutput(), submit("k1"), NOW);
    expect(decision.ok && decision.effects.map((effect) => effect.type)).toEqual([
      "take-lease",
      "action-resolved",
      "drive",
    ]);
  });

  it("defers the outcome to after the hooks: the call stays without one, and only the winner finishes it", () => {
    const decision = decideResolve(
      waitingOnOutput(),
      { ...submit(null), finish: { type: "hooks", outcome: { type: "output", output: { choice: "a" } } } },
      NOW,
    );
    if (!decision.ok) throw new Error(decision.message);
    const after = apply(waitingOnOutput(), decision);
    const part = after.messages.at(-1)?.message.parts.at(-1) as { state: string };
    expect(part.state).toBe("input-available");
    expect(decision.effects.map((effect) => effect.type)).toEqual([
      "take-lease",
      "action-resolved",
      "finish-answer",
    ]);
  });

  it("on state where the action is already answered: the winner's key replays its result with no effects, anything else is CONFLICT", () => {
    fc.assert(
      fc.property(
        fc.option(fc.string({ minLength: 1, maxLength: 8 }), { nil: null }),
        fc.option(fc.string({ minLength: 1, maxLength: 8 }), { nil: null }),
        fc.constantFrom("submit" as const, "cancel" as const, "fail" as const),
        (winnerKey, retryKey, retryKind) => {
          const waiting = waitingOnOutput();
          const answered = apply(waiting, decideResolve(waiting, submit(winnerKey), NOW));
          const retry: ResolveInput =
            retryKind === "submit"
              ? submit(retryKey, { choice: "b" })
              : {
                  ...submit(retryKey),
                  kind: retryKind,
                  resolution:
                    retryKind === "cancel"
                      ? { type: "cancel", reason: null, errorText: "Cancelled" }
                      : { type: "fail", message: "x", errorText: "x" },
                };
          const decision = decideResolve(answered, retry, NOW);
          if (winnerKey !== null && retryKey === winnerKey && retryKind === "submit") {
            expect(decision.ok && decision.value.type).toBe("replayed");
            expect(decision.ok && decision.events).toEqual([]);
            expect(decision.ok && decision.effects).toEqual([]);
            expect(decision.ok && decision.value.type === "replayed" && decision.value.version).toBe(
              waiting.thread.version + 1,
            );
          } else {
            expect(!decision.ok && decision.code).toBe("CONFLICT");
          }
        },
      ),
    );
  });
});

describe("decideNextMove", () => {
  it("interrupts calls no process is running, waits for its own, parks on pending actions", () => {
    let state = apply(empty(), decideStartRun(empty(), start("r1"), NOW));
    const run = state.runs[0] as RunRow;
    const planned = planStep(
      [{ kind: "tool", toolCallId: "call-x", toolName: "work", input: {}, dynamic: false }],
      { thread: state.thread, run, messageId: "m1", now: NOW, route: () => "execute" },
    );
    state = apply(state, decideStep(state, { runId: "r1", messageId: "m1", expectedStep: 0, planned }, NOW));
    const move = (inflight: string[]) =>
      decideNextMove(state, { runId: "r1", inflight: new Set(inflight), maxSteps: 20 }).type;
    expect(move([])).toBe("interrupt");
    expect(move(["call-x"])).toBe("await-calls");
    expect(decideNextMove(waitingOnOutput(), { runId: "r1", inflight: new Set(), maxSteps: 20 }).type).toBe(
      "parked",
    );
  });
});

describe("a resume queued by an API instance", () => {
  /** Run r1 with call-x unsettled and its suspension submitted, waiting for a driver to re-enter it. */
  function queued(): ThreadSnapshot {
    let state = apply(empty(), decideStartRun(empty(), start("r1"), NOW));
    const run = state.runs[0] as RunRow;
    const planned = planStep(
      [{ kind: "tool", toolCallId: "call-x", toolName: "work", input: {}, dynamic: false }],
      { thread: state.thread, run, messageId: "m1", now: NOW, route: () => "execute" },
    );
    state = apply(state, decideStep(state, { runId: "r1", messageId: "m1", expectedStep: 0, planned }, NOW));
    const action: ActionRow = {
      threadId: "t",
      actionId: "act-1",
      scopeKey: "s",
      runId: "r1",
      messageId: "m1",
      toolCallId: "call-x",
      toolName: "work",
      kind: "suspend",
      suspendName: "approval",
      name: "work.approval",
      input: null,
      state: "submitted",
      episode: 1,
      createdAt: NOW,
      resolvedAt: NOW,
      resume: { ok: true },
      reason: null,
      idempotencyKey: null,
      resumeQueued: true,
    };
    return applyThreadEvent(state, { type: "action-upserted", action });
  }

  it("is the driver's next move, claimed once, and a lost claim is interrupted like any leftover", () => {
    const state = queued();
    const move = decideNextMove(state, { runId: "r1", inflight: new Set(), maxSteps: 20 });
    expect(move).toEqual({ type: "resume", action: expect.objectContaining({ actionId: "act-1" }) });
    // This process already re-enters it: wait for the call, do not claim again.
    expect(decideNextMove(state, { runId: "r1", inflight: new Set(["call-x"]), maxSteps: 20 }).type).toBe(
      "await-calls",
    );
    const claim = decideClaimResume(state, "act-1");
    expect(claim.ok && claim.value.resumeQueued).toBe(false);
    const claimed = apply(state, claim);
    const again = decideClaimResume(claimed, "act-1");
    expect(again.ok).toBe(false);
    // The claimer died: no process runs the call, so the next driver records it as interrupted.
    expect(decideNextMove(claimed, { runId: "r1", inflight: new Set(), maxSteps: 20 }).type).toBe(
      "interrupt",
    );
    const kept = decideInterrupt(claimed, "r1", NOW, new Set(["call-x"]));
    expect(kept.ok && kept.events).toEqual([]);
    const interrupted = decideInterrupt(claimed, "r1", NOW);
    expect(interrupted.ok && interrupted.events).toHaveLength(1);
  });

  it("an answer on an API instance queues the resume instead of re-entering the tool", () => {
    let state = apply(empty(), decideStartRun(empty(), start("r1"), NOW));
    const run = state.runs[0] as RunRow;
    const planned = planStep(
      [{ kind: "tool", toolCallId: "call-x", toolName: "work", input: {}, dynamic: false }],
      { thread: state.thread, run, messageId: "m1", now: NOW, route: () => "execute" },
    );
    state = apply(state, decideStep(state, { runId: "r1", messageId: "m1", expectedStep: 0, planned }, NOW));
    const pendingAction = {
      ...(queued().actions[0] as ActionRow),
      state: "pending" as const,
      resumeQueued: undefined,
    };
    state = applyThreadEvent(state, { type: "action-upserted", action: pendingAction });
    const answer = (queueResume: boolean) =>
      decideResolve(
        state,
        {
          actionId: "act-1",
          kind: "submit",
          resolution: { type: "submit", payload: { ok: true } },
          idempotencyKey: null,
          finish: { type: "resume" },
          queueResume,
        },
        NOW,
      );
    const here = answer(false);
    expect(here.ok && here.effects.map((effect) => effect.type)).toContain("resume-call");
    const queuedAnswer = answer(true);
    expect(queuedAnswer.ok && queuedAnswer.effects.map((effect) => effect.type)).toEqual([
      "action-resolved",
      "drive",
    ]);
    expect(
      queuedAnswer.ok && queuedAnswer.value.type === "resolved" && queuedAnswer.value.action.resumeQueued,
    ).toBe(true);
  });
});

describe("shouldResendRun", () => {
  const at = (ms: number) => new Date(Date.parse(NOW) + ms).toISOString();
  const base = Date.parse(NOW);
  it("waits a lease length without progress, then sends at most once per lease length per process", () => {
    const run = { status: "running" as const, updatedAt: at(0) };
    const check = (now: number, lastSentAt: number | null) =>
      shouldResendRun(run, {
        now: base + now,
        leaseMs: 1_000,
        lastSentAt: lastSentAt === null ? null : base + lastSentAt,
      });
    expect(check(999, null)).toBe(false);
    expect(check(1_000, null)).toBe(true);
    expect(check(1_500, 1_000)).toBe(false);
    expect(check(2_000, 1_000)).toBe(true);
    expect(
      shouldResendRun(
        { status: "waiting", updatedAt: at(0) },
        { now: base + 5_000, leaseMs: 1_000, lastSentAt: null },
      ),
    ).toBe(false);
  });
});

describe("what a decision says its events lead to", () => {
  it("a final step and the wake the writer adds lead where applying each event leads", () => {
    let state = apply(empty(), decideStartRun(empty(), start("r1"), NOW));
    // A schedule due later: the writer's wake moves when the run completes.
    state = {
      ...state,
      thread: {
        ...state.thread,
        schedules: [
          {
            scheduleId: "s1",
            timing: { at: "2030-01-01T00:00:00.000Z" },
            message: "later",
            data: null,
            state: "active",
            nextAt: "2030-01-01T00:00:00.000Z",
            fired: 0,
            lastFiredAt: null,
            createdAt: NOW,
            cancelledAt: null,
          },
        ],
      },
    };
    const run = state.runs[0] as RunRow;
    const planned = planStep([{ kind: "text", text: "done" }], {
      thread: state.thread,
      run,
      messageId: "m1",
      now: NOW,
      route: () => "execute",
    });
    const decision = decideStep(state, { runId: "r1", messageId: "m1", expectedStep: 0, planned }, NOW);
    if (!decision.ok) throw new Error(decision.message);
    expect(decision.value.completed).toBe(true);
    const stepwise = decision.events.reduce(applyThreadEvent, state);
    expect(decision.after).toEqual(stepwise);
    expect(applyThreadEvents(state, decision.events)).toEqual(stepwise);
    const timed = withWakeAt(state, decision.events, decision.after);
    expect(timed.moved).toBe(true);
    expect(timed.events).not.toBe(decision.events);
    expect(timed.after).toEqual(timed.events.reduce(applyThreadEvent, state));
    expect(timed.after.thread.wakeAt).toBe("2030-01-01T00:00:00.000Z");
    // Without the decider's projection the writer projects the events itself, to the same place.
    expect(withWakeAt(state, decision.events).after).toEqual(timed.after);
  });

  it("a step that parks its run, and a settled call, lead where applying each event leads", () => {
    const state = apply(empty(), decideStartRun(empty(), start("r1"), NOW));
    const run = state.runs[0] as RunRow;
    const planned = planStep(
      [
        { kind: "tool", toolCallId: "call-1", toolName: "pick", input: {}, dynamic: false },
        { kind: "tool", toolCallId: "call-2", toolName: "add", input: {}, dynamic: false },
      ],
      {
        thread: state.thread,
        run,
        messageId: "m1",
        now: NOW,
        route: (name) => (name === "pick" ? "output" : "execute"),
      },
    );
    const stepped = decideStep(state, { runId: "r1", messageId: "m1", expectedStep: 0, planned }, NOW);
    if (!stepped.ok) throw new Error(stepped.message);
    expect(stepped.after).toEqual(stepped.events.reduce(applyThreadEvent, state));
    const running = apply(state, stepped);
    // Settling the executed call leaves only the pending action: the same commit parks the run.
    const settled = decideSettle(
      running,
      { runId: "r1", toolCallId: "call-2", outcome: { type: "output", output: 3 } },
      NOW,
    );
    if (!settled.ok) throw new Error(settled.message);
    expect(
      settled.events.some((event) => event.type === "run-upserted" && event.run.status === "waiting"),
    ).toBe(true);
    expect(settled.after).toEqual(settled.events.reduce(applyThreadEvent, running));
  });
});
