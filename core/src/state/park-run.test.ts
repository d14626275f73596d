import { describe, expect, it } from "vitest";
import { parkIfBlocked } from "./park-run.js";
import type { ActionRow, RunRow } from "./rows.js";
import { applyThreadEvent, applyThreadEvents, type ThreadSnapshot } from "./snapshot.js";
import { commitStep, settleToolCall, startRun, suspendToolCall, type Transition } from "./transitions.js";

const NOW = "2026-01-01T00:00:00.000Z";

function apply(state: ThreadSnapshot, transition: Transition): ThreadSnapshot {
  if (!transition.ok) throw new Error(transition.message);
  return transition.events.reduce(applyThreadEvent, state);
}

/** A thread whose running run has committed a step with the given tool calls, none settled. */
function stepWithCalls(callIds: string[]): ThreadSnapshot {
  let state: ThreadSnapshot = {
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
  const run: RunRow = {
    threadId: "t",
    runId: "r",
    status: "running",
    trigger: { type: "message", messageId: "u" },
    step: 0,
    messageId: null,
    clientTools: [],
    clientData: null,
    error: null,
    createdAt: NOW,
    updatedAt: NOW,
    finishedAt: null,
  };
  state = apply(state, startRun(state, { run, now: NOW }));
  const parts = [
    { type: "step-start" },
    ...callIds.map((toolCallId) => ({ type: "tool-x", toolCallId, state: "input-available", input: {} })),
  ];
  return apply(state, commitStep(state, { runId: "r", messageId: "m", parts, outputActions: [], now: NOW }));
}

function suspension(toolCallId: string): ActionRow {
  return {
    threadId: "t",
    actionId: `a-${toolCallId}`,
    scopeKey: "s",
    runId: "r",
    messageId: "m",
    toolCallId,
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
}

const statusAfter = (state: ThreadSnapshot, transition: Transition) =>
  apply(state, transition).runs.find((run) => run.runId === "r")?.status;

describe("parkIfBlocked", () => {
  it("parks the run in the same transition that suspends its only call", () => {
    const state = stepWithCalls(["c1"]);
    const parked = parkIfBlocked(state, suspendToolCall(state, { action: suspension("c1"), now: NOW }), {
      runId: "r",
      now: NOW,
    });
    expect(statusAfter(state, parked)).toBe("waiting");
    expect(apply(state, parked).thread.status).toBe("waiting");
    // What it says the longer batch leads to is what applying it gives.
    if (!parked.ok) throw new Error(parked.message);
    expect(parked.after).toEqual(parked.events.reduce(applyThreadEvent, state));
  });

  it("keeps the run running while another call still has no outcome, and parks when it settles", () => {
    let state = stepWithCalls(["c1", "c2"]);
    const suspended = parkIfBlocked(state, suspendToolCall(state, { action: suspension("c1"), now: NOW }), {
      runId: "r",
      now: NOW,
    });
    expect(statusAfter(state, suspended)).toBe("running");
    state = apply(state, suspended);
    const settled = parkIfBlocked(
      state,
      settleToolCall(state, {
        runId: "r",
        toolCallId: "c2",
        outcome: { type: "output", output: 1 },
        now: NOW,
      }),
      { runId: "r", now: NOW },
    );
    expect(statusAfter(state, settled)).toBe("waiting");
  });

  it("leaves a run with nothing pending running (saying where its events lead), and passes rejections through unchanged", () => {
    const state = stepWithCalls(["c1"]);
    const settled = settleToolCall(state, {
      runId: "r",
      toolCallId: "c1",
      outcome: { type: "output", output: 1 },
      now: NOW,
    });
    if (!settled.ok) throw new Error(settled.message);
    const kept = parkIfBlocked(state, settled, { runId: "r", now: NOW });
    expect(kept).toEqual({
      ok: true,
      events: settled.events,
      after: applyThreadEvents(state, settled.events),
    });
    const rejected: Transition = { ok: false, code: "CONFLICT", message: "no" };
    expect(parkIfBlocked(state, rejected, { runId: "r", now: NOW })).toBe(rejected);
  });
});
