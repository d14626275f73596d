import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { ActionRow, MessageRow, RunRow, ThreadRow } from "./rows.js";
import { applyStoredEvents, type ThreadSnapshot } from "./snapshot.js";
import { findToolPart, isUnsettledToolPart } from "./tool-parts.js";
import {
  activeRun,
  cancelRun,
  commitStep,
  pendingActions,
  resolveAction,
  setRunStatus,
  settleToolCall,
  startRun,
  suspendToolCall,
  type Transition,
} from "./transitions.js";

const NOW = "2026-01-01T00:00:00.000Z";

function emptyThread(): ThreadSnapshot {
  const thread: ThreadRow = {
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
  };
  return { thread, messages: [], runs: [], actions: [], toolData: [] };
}

type Command =
  | { type: "start" }
  | { type: "step"; calls: number }
  | { type: "suspend"; call: number }
  | { type: "settle"; call: number; error: boolean }
  | { type: "resolve"; action: number; kind: "submit" | "cancel" | "fail" }
  | { type: "wait" }
  | { type: "finish" }
  | { type: "cancel" };

const command: fc.Arbitrary<Command> = fc.oneof(
  fc.constant({ type: "start" as const }),
  fc.record({ type: fc.constant("step" as const), calls: fc.integer({ min: 0, max: 3 }) }),
  fc.record({ type: fc.constant("suspend" as const), call: fc.integer({ min: 0, max: 8 }) }),
  fc.record({
    type: fc.constant("settle" as const),
    call: fc.integer({ min: 0, max: 8 }),
    error: fc.boolean(),
  }),
  fc.record({
    type: fc.constant("resolve" as const),
    action: fc.integer({ min: 0, max: 8 }),
    kind: fc.constantFrom("submit" as const, "cancel" as const, "fail" as const),
  }),
  fc.constant({ type: "wait" as const }),
  fc.constant({ type: "finish" as const }),
  fc.constant({ type: "cancel" as const }),
);

/** Turns a generated command into a transition on the current state (ids are deterministic). */
function decide(state: ThreadSnapshot, cmd: Command, counter: { n: number }): Transition {
  const run = activeRun(state) ?? state.runs.at(-1);
  const tail = run?.messageId
    ? state.messages.find((message) => message.messageId === run.messageId)
    : undefined;
  const calls = (tail?.message.parts ?? []).filter((part) => "toolCallId" in (part as object)) as Array<{
    toolCallId: string;
  }>;
  const id = () => `id-${++counter.n}`;
  switch (cmd.type) {
    case "start": {
      const newRun: RunRow = {
        threadId: "t",
        runId: id(),
        status: "running",
        trigger: { type: "message", messageId: "m" },
        step: 0,
        messageId: null,
        clientTools: [],
        clientData: null,
        error: null,
        createdAt: NOW,
        updatedAt: NOW,
        finishedAt: null,
      };
      const message: MessageRow = {
        threadId: "t",
        messageId: id(),
        position: (state.messages.at(-1)?.position ?? 0) + 1,
        role: "user",
        message: { id: "u", role: "user", parts: [{ type: "text", text: "hi" }] },
        runId: null,
        createdAt: NOW,
        updatedAt: NOW,
      };
      return startRun(state, { run: newRun, message, now: NOW });
    }
    case "step": {
      if (!run) return { ok: false, code: "NOT_FOUND", message: "no run" };
      const parts: unknown[] = [{ type: "step-start" }];
      for (let index = 0; index < cmd.calls; index++) {
        parts.push({ type: "tool-x", toolCallId: id(), state: "input-available", input: {} });
      }
      return commitStep(state, {
        runId: run.runId,
        messageId: run.messageId ?? id(),
        parts,
        outputActions: [],
        now: NOW,
      });
    }
    case "suspend": {
      const call = calls[cmd.call % Math.max(1, calls.length)];
      if (!run || !call) return { ok: false, code: "NOT_FOUND", message: "no call" };
      const action: ActionRow = {
        threadId: "t",
        actionId: id(),
        scopeKey: "s",
        runId: run.runId,
        messageId: run.messageId ?? "",
        toolCallId: call.toolCallId,
        toolName: "x",
        kind: "suspend",
        suspendName: "p",
        name: "x.p",
        input: null,
        state: "pending",
        episode: 1,
        createdAt: NOW,
        resolvedAt: null,
        resume: null,
        reason: null,
        idempotencyKey: null,
      };
      return suspendToolCall(state, { action, now: NOW });
    }
    case "settle": {
      const call = calls[cmd.call % Math.max(1, calls.length)];
      if (!run || !call) return { ok: false, code: "NOT_FOUND", message: "no call" };
      return settleToolCall(state, {
        runId: run.runId,
        toolCallId: call.toolCallId,
        outcome: cmd.error ? { type: "error", errorText: "boom" } : { type: "output", output: 1 },
        now: NOW,
      });
    }
    case "resolve": {
      const action = state.actions[cmd.action % Math.max(1, state.actions.length)];
      if (!action) return { ok: false, code: "NOT_FOUND", message: "no action" };
      const resolution =
        cmd.kind === "submit"
          ? { type: "submit" as const, payload: 1 }
          : cmd.kind === "cancel"
            ? { type: "cancel" as const, reason: null, errorText: "Cancelled" }
            : { type: "fail" as const, message: "no", errorText: "no" };
      return resolveAction(state, { actionId: action.actionId, resolution, idempotencyKey: null, now: NOW });
    }
    case "wait":
      if (!run) return { ok: false, code: "NOT_FOUND", message: "no run" };
      return setRunStatus(state, { runId: run.runId, status: "waiting", now: NOW });
    case "finish":
      if (!run) return { ok: false, code: "NOT_FOUND", message: "no run" };
      return setRunStatus(state, { runId: run.runId, status: "completed", now: NOW });
    case "cancel":
      if (!run) return { ok: false, code: "NOT_FOUND", message: "no run" };
      return cancelRun(state, { runId: run.runId, reason: "stop", now: NOW });
  }
}

function checkInvariants(state: ThreadSnapshot) {
  for (const action of pendingActions(state)) {
    const run = state.runs.find((candidate) => candidate.runId === action.runId);
    expect(run, "a pending action belongs to an existing run").toBeDefined();
    expect(["running", "waiting"]).toContain(run!.status);
    const tail = state.messages.find((message) => message.messageId === run!.messageId);
    expect(tail, "a pending action points into the run's open tail message").toBeDefined();
    const found = findToolPart(tail!.message, action.toolCallId);
    expect(found, "a pending action points at a tool part").not.toBeNull();
    expect(isUnsettledToolPart(found!.part), "that tool part has no outcome yet").toBe(true);
  }
  expect(
    state.runs.filter((run) => run.status === "running" || run.status === "waiting").length,
  ).toBeLessThanOrEqual(1);
  const pendingCalls = pendingActions(state).map((action) => action.toolCallId);
  expect(new Set(pendingCalls).size, "at most one pending action per tool call").toBe(pendingCalls.length);
}

describe("thread state machine (property tests)", () => {
  it("keeps its invariants over random command sequences", () => {
    fc.assert(
      fc.property(fc.array(command, { maxLength: 40 }), (commands) => {
        let state = emptyThread();
        const counter = { n: 0 };
        const resolvedOnce = new Map<string, string>();
        for (const cmd of commands) {
          const before = state;
          const transition = decide(state, cmd, counter);
          if (!transition.ok) {
            // A rejected command changes nothing: it produced no events and state is untouched.
            expect(state).toBe(before);
            continue;
          }
          const version = state.thread.version;
          state = applyStoredEvents(state, {
            threadId: "t",
            version: version + 1,
            events: transition.events,
            createdAt: NOW,
          });
          expect(state.thread.version, "versions only grow").toBeGreaterThan(version);
          for (const action of state.actions) {
            if (action.state === "pending") continue;
            const previous = resolvedOnce.get(action.actionId);
            if (previous) {
              expect(action.state, "an action resolves at most once").toBe(previous);
            }
            resolvedOnce.set(action.actionId, action.state);
          }
          checkInvariants(state);
        }
      }),
      { numRuns: 500 },
    );
  });

  it("keeps pending actions attached when a run finishes", () => {
    const counter = { n: 0 };
    let state = emptyThread();
    const script: Command[] = [
      { type: "start" },
      { type: "step", calls: 1 },
      { type: "suspend", call: 0 },
      { type: "finish" },
    ];
    const results: boolean[] = [];
    for (const cmd of script) {
      const transition = decide(state, cmd, counter);
      results.push(transition.ok);
      if (!transition.ok) continue;
      state = applyStoredEvents(state, {
        threadId: "t",
        version: state.thread.version + 1,
        events: transition.events,
        createdAt: NOW,
      });
    }
    expect(results).toEqual([true, true, true, false]); // completing with pending work is rejected
    checkInvariants(state);
  });

  it("rejects a second resolution of the same action", () => {
    fc.assert(
      fc.property(
        fc.constantFrom("submit" as const, "cancel" as const, "fail" as const),
        fc.constantFrom("submit" as const, "cancel" as const, "fail" as const),
        (first, second) => {
          const counter = { n: 0 };
          let state = emptyThread();
          for (const cmd of [
            { type: "start" },
            { type: "step", calls: 1 },
            { type: "suspend", call: 0 },
          ] as Command[]) {
            const transition = decide(state, cmd, counter);
            if (!transition.ok) throw new Error(transition.message);
            state = applyStoredEvents(state, {
              threadId: "t",
              version: state.thread.version + 1,
              events: transition.events,
              createdAt: NOW,
            });
          }
          const once = decide(state, { type: "resolve", action: 0, kind: first }, counter);
          expect(once.ok).toBe(true);
          if (!once.ok) return;
          state = applyStoredEvents(state, {
            threadId: "t",
            version: state.thread.version + 1,
            events: once.events,
            createdAt: NOW,
          });
          const twice = decide(state, { type: "resolve", action: 0, kind: second }, counter);
          expect(twice).toMatchObject({ ok: false, code: "CONFLICT" });
        },
      ),
    );
  });
});
