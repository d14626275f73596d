import type { ThreadSnapshot } from "@pai/core";
import { projectThreadState } from "@pai/core/protocol";
import { expect } from "vitest";
import { describeRequest, type Ledger, stateOf, type Winner } from "./ledger.js";
import { type HookCall, IDENTITY, type RuntimeSystem } from "./system.js";

type ToolPart = { type: string; toolCallId: string; state: string; output?: unknown; errorText?: string };

function toolPart(snapshot: ThreadSnapshot, toolCallId: string): ToolPart | undefined {
  for (const message of snapshot.messages) {
    for (const part of message.message.parts as Array<Partial<ToolPart>>) {
      if (part.toolCallId === toolCallId) return part as ToolPart;
    }
  }
  return undefined;
}

const ACTIVE = new Set(["running", "waiting"]);
const TERMINAL = new Set(["completed", "failed", "cancelled"]);

function summary(snapshot: ThreadSnapshot): string {
  return JSON.stringify({
    thread: { status: snapshot.thread.status, activeRunId: snapshot.thread.activeRunId },
    runs: snapshot.runs.map((run) => `${run.runId}:${run.status}`),
    actions: snapshot.actions.map((action) => `${action.actionId}(${action.name}):${action.state}`),
  });
}

/**
 * Invariants that hold in every committed state, checked after every command without waiting
 * for background work (runs keep going between commands).
 */
export async function checkSafety(system: RuntimeSystem, ledger: Ledger): Promise<void> {
  for (const threadId of system.threadIds) {
    const stored = await system.stored(threadId);
    checkThreadSanity(stored, system);
    checkWinners(stored, ledger, false);
    checkUnexplainedResolutions(stored, ledger);
  }
  await checkHooks(system, ledger, false);
}

/**
 * Everything once this process has no work in flight: the safety invariants, hooks that must
 * have run exactly once, no run left behind, and "live equals reload" — the state a watcher
 * folded from `service.threads.watch` equals storage, a brand-new runtime's read and the
 * current runtime's own (cached) read path, and so do their client projections.
 */
export async function checkQuiescent(system: RuntimeSystem, ledger: Ledger): Promise<void> {
  await system.waitForIdle();
  for (const threadId of system.threadIds) {
    const stored = await system.stored(threadId);
    checkThreadSanity(stored, system);
    checkWinners(stored, ledger, true);
    checkUnexplainedResolutions(stored, ledger);
    checkIdleThread(stored);
    await checkProjection(system, threadId, stored);
  }
  await checkHooks(system, ledger, true);
}

function checkThreadSanity(stored: ThreadSnapshot, system: RuntimeSystem): void {
  const where = `thread ${stored.thread.threadId} ${summary(stored)}`;
  const active = stored.runs.filter((run) => ACTIVE.has(run.status));
  expect(active.length, `at most one active run per thread: ${where}`).toBeLessThanOrEqual(1);
  expect(stored.thread.activeRunId, `thread.activeRunId names the active run: ${where}`).toBe(
    active[0]?.runId ?? null,
  );
  expect(stored.thread.status, `thread.status follows the active run: ${where}`).toBe(
    active[0]?.status ?? "idle",
  );
  const failed = stored.runs.filter((run) => run.status === "failed");
  expect(
    failed.map((run) => `${run.runId}: ${run.error}`),
    `no run of this model may fail (runtime errors: ${system.reports.map((report) => `${report.phase}: ${String((report.error as Error)?.message ?? report.error)}`).join(" | ")}): ${where}`,
  ).toEqual([]);
  for (const action of stored.actions.filter((candidate) => candidate.state === "pending")) {
    const run = stored.runs.find((candidate) => candidate.runId === action.runId);
    expect(
      run?.status,
      `pending action ${action.actionId} must belong to an active run, not a finished one: ${where}`,
    ).toSatisfy((status: string | undefined) => status !== undefined && ACTIVE.has(status));
    expect(
      toolPart(stored, action.toolCallId)?.state,
      `the tool part of pending action ${action.actionId} has no outcome yet: ${where}`,
    ).toBe("input-available");
  }
}

/** Each accepted resolution is what storage holds: the action row, its answer and the tool part. */
function checkWinners(stored: ThreadSnapshot, ledger: Ledger, idle: boolean): void {
  for (const winner of ledger.winners.values()) {
    if (winner.threadId !== stored.thread.threadId) continue;
    const what = `${describeRequest(winner)} of ${winner.actionId} (${winner.toolName}.${winner.actionKind}, via ${winner.via})`;
    const action = stored.actions.find((candidate) => candidate.actionId === winner.actionId);
    expect(action, `the stored action row equals the winner's result for ${what}`).toEqual(
      winner.result.action,
    );
    expect(action?.state, `stored state of ${what}`).toBe(stateOf(winner.kind));
    if (winner.kind === "submit") expect(action?.resume, `stored answer of ${what}`).toEqual(winner.payload);
    if (winner.kind === "cancel") expect(action?.reason, `stored reason of ${what}`).toBe(winner.reason);
    if (winner.kind === "fail") expect(action?.reason, `stored error of ${what}`).toBe(winner.error);
    expect(action?.idempotencyKey ?? null, `stored idempotency key of ${what}`).toBe(winner.key);
    expect(action?.resolvedVersion, `resolvedVersion of ${what} is the version its request got`).toBe(
      winner.result.version,
    );
    const part = toolPart(stored, winner.toolCallId);
    const partText = JSON.stringify(part);
    if (winner.kind === "submit" && winner.actionKind === "output") {
      expect(part?.state, `tool part after ${what}: ${partText}`).toBe("output-available");
      expect(part?.output, `tool part output after ${what}`).toEqual(winner.payload);
    } else if (winner.kind === "submit") {
      // A resumed call settles when the re-entered tool commits; a run cancel or a restart
      // meanwhile may record it as cancelled or interrupted instead.
      const allowed = idle
        ? ["output-available", "output-error"]
        : ["input-available", "output-available", "output-error"];
      expect(allowed, `tool part after ${what}: ${partText}`).toContain(part?.state);
      if (part?.state === "output-available") {
        expect(part.output, `resumed output after ${what}`).toEqual(winner.payload);
      }
    } else if (winner.kind === "fail") {
      expect(part?.state, `tool part after ${what}: ${partText}`).toBe("output-error");
      expect(part?.errorText, `tool part error after ${what}`).toBe(winner.error);
    } else {
      // The model-visible cancellation text ("Cancelled: <reason>"; clients derive part.cancelled from it).
      expect(part?.state, `tool part after ${what}: ${partText}`).toBe("output-error");
      expect(part?.errorText, `tool part error after ${what}`).toMatch(/^Cancelled/);
      expect(part?.errorText, `tool part error after ${what}`).toContain(String(winner.reason));
    }
  }
}

/** A resolved action no accepted request explains was cancelled with its run; nothing else writes answers. */
function checkUnexplainedResolutions(stored: ThreadSnapshot, ledger: Ledger): void {
  for (const action of stored.actions) {
    if (action.state === "pending" || ledger.winnerOf(action.threadId, action.actionId)) continue;
    const run = stored.runs.find((candidate) => candidate.runId === action.runId);
    expect(
      { state: action.state, idempotencyKey: action.idempotencyKey, resume: action.resume },
      `action ${action.actionId} (${action.name}) was resolved although every request for it was rejected: ${JSON.stringify(action)}`,
    ).toEqual({ state: "cancelled", idempotencyKey: null, resume: null });
    expect(
      run?.status,
      `action ${action.actionId} was cancelled without a request, so its run must have ended cancelled: ${summary(stored)}`,
    ).toBe("cancelled");
  }
}

/** No run is left running or queued behind nothing; a waiting run waits for something. */
function checkIdleThread(stored: ThreadSnapshot): void {
  const where = `thread ${stored.thread.threadId} at idle ${summary(stored)}`;
  expect(
    stored.runs.filter((run) => run.status === "running").map((run) => run.runId),
    `no run is left running once the process is idle: ${where}`,
  ).toEqual([]);
  const waiting = stored.runs.find((run) => run.status === "waiting");
  if (!waiting) {
    expect(
      stored.runs.filter((run) => run.status === "queued").map((run) => run.runId),
      `a queued run starts once nothing is active: ${where}`,
    ).toEqual([]);
  } else {
    expect(
      stored.actions.some((action) => action.runId === waiting.runId && action.state === "pending"),
      `a waiting run has a pending action: ${where}`,
    ).toBe(true);
  }
  for (const run of stored.runs.filter((candidate) => TERMINAL.has(candidate.status))) {
    expect(run.finishedAt, `finished run ${run.runId} has finishedAt: ${where}`).not.toBeNull();
  }
}

async function checkProjection(system: RuntimeSystem, threadId: string, stored: ThreadSnapshot) {
  const watcher = system.watchers.get(threadId)!;
  const deadline = Date.now() + 2_000;
  while (watcher.version < stored.thread.version && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 2));
  }
  expect(watcher.problems, `watch of ${threadId} delivered every version once`).toEqual([]);
  expect(watcher.version, `watch of ${threadId} caught up with storage`).toBe(stored.thread.version);
  expect(watcher.snapshot, `live state folded from watch equals storage (${threadId})`).toEqual(stored);
  const reloaded = await system.reloaded(threadId);
  expect(reloaded, `a fresh runtime's threads.get equals storage (${threadId})`).toEqual(stored);
  const own = await system.service.threads.get({ identity: IDENTITY, threadId });
  expect(own, `the running runtime's threads.get equals storage (${threadId})`).toEqual(stored);
  expect(
    projectThreadState(watcher.snapshot),
    `the client projection of the live state equals that of a reload (${threadId})`,
  ).toEqual(projectThreadState(reloaded));
}

/** What the hooks must have seen for an accepted resolution (a cancel: the text the model sees). */
function expectedHooks(winner: Winner, stored: ThreadSnapshot): { after: unknown; onOutput: unknown | null } {
  switch (winner.kind) {
    case "submit":
      return { after: { type: "output", output: winner.payload }, onOutput: winner.payload };
    case "fail":
      return { after: { type: "error", errorText: winner.error }, onOutput: null };
    case "cancel":
      return {
        after: { type: "error", errorText: toolPart(stored, winner.toolCallId)?.errorText },
        onOutput: null,
      };
  }
}

function hookText(calls: HookCall[]): string {
  return JSON.stringify(
    calls.map((call) => ({ hook: call.hook, value: call.value, runtime: call.generation })),
  );
}

/**
 * Observers and hooks run for accepted resolutions only, at most once each and on the winner's
 * payload; at idle, exactly once where the result was committed (a client-answered output or
 * a failure at once, a resumed call when its output was stored). A cancel may be observed by
 * afterToolResult (at most once) but never by onOutput.
 */
async function checkHooks(system: RuntimeSystem, ledger: Ledger, idle: boolean): Promise<void> {
  const byCall = new Map<string, HookCall[]>();
  for (const call of system.hooks) {
    const list = byCall.get(call.toolCallId) ?? [];
    list.push(call);
    byCall.set(call.toolCallId, list);
  }
  const storedByThread = new Map<string, ThreadSnapshot>();
  for (const threadId of system.threadIds) storedByThread.set(threadId, await system.stored(threadId));

  for (const [toolCallId, calls] of byCall) {
    const winner = ledger.winnerForCall(toolCallId);
    expect(
      winner,
      `observers/hooks ran for call ${toolCallId}, which no accepted request resolved: ${hookText(calls)}`,
    ).toBeDefined();
  }
  for (const winner of ledger.winners.values()) {
    const calls = byCall.get(winner.toolCallId) ?? [];
    const after = calls.filter((call) => call.hook === "afterToolResult");
    const onOutput = calls.filter((call) => call.hook === "onOutput");
    const what = `${describeRequest(winner)} of ${winner.actionId} (${winner.toolName}.${winner.actionKind}, via ${winner.via}); calls seen: ${hookText(calls)}`;
    const stored = storedByThread.get(winner.threadId)!;
    const expected = expectedHooks(winner, stored);
    expect(after.length, `afterToolResult runs at most once for ${what}`).toBeLessThanOrEqual(1);
    expect(onOutput.length, `onOutput runs at most once for ${what}`).toBeLessThanOrEqual(
      expected.onOutput === null ? 0 : 1,
    );
    for (const call of after) {
      expect(call.value, `afterToolResult saw the winner's result for ${what}`).toEqual(expected.after);
    }
    for (const call of onOutput) {
      expect(call.value, `onOutput saw the winner's payload for ${what}`).toEqual(expected.onOutput);
    }
    if (!idle) continue;
    const committedOutput =
      winner.kind === "submit" &&
      (winner.actionKind === "output" || toolPart(stored, winner.toolCallId)?.state === "output-available");
    if (committedOutput) {
      expect(after.length, `afterToolResult ran exactly once for ${what}`).toBe(1);
      expect(onOutput.length, `onOutput ran exactly once for ${what}`).toBe(1);
    }
    if (winner.kind === "fail") {
      expect(after.length, `afterToolResult ran exactly once for ${what}`).toBe(1);
    }
  }
}
