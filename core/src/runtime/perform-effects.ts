import { PaiError, REDACTED_ERROR_MESSAGE } from "../errors/pai-error.js";
import { decideSettle } from "../state/deciders/call-deciders.js";
import type { Effect } from "../state/deciders/decision.js";
import type { ActionRow } from "../state/rows.js";
import type { ThreadSnapshot } from "../state/snapshot.js";
import type { ToolOutcome } from "../state/transitions.js";
import type { RequestContext } from "./request-context.js";
import { type RunDriver, scopeOf } from "./run-driver.js";
import { LeaseLostError } from "./run-leases.js";
import type { CommitOrigin } from "./run-writer.js";
import type { RuntimeCore } from "./runtime-core.js";
import type { TransactResult } from "./thread-store.js";
import { runToolCall } from "./tool-call.js";
import { applyAfterToolResult, hookFailureError, observeOutput, toOutcome } from "./tool-hooks.js";

/**
 * Carries out the effects of a commit that won, in order. Reporting and bookkeeping are
 * synchronous; driving a run and re-entering a resumed tool run in the background (tracked
 * for `waitForIdle`); finishing an answered call is awaited, so its client hears of a failing
 * hook.
 */
export async function performEffects(
  rt: RuntimeCore,
  driver: RunDriver,
  effects: Effect[],
  committed: TransactResult,
  origin: CommitOrigin | undefined,
): Promise<void> {
  const snapshot = committed.snapshot;
  const threadId = snapshot.thread.threadId;
  const runIds = (runId: string) => ({
    threadId,
    runId,
    agentId: snapshot.thread.agentId,
    scopeKey: snapshot.thread.scopeKey,
  });
  const drive = (runId: string) => {
    const run = snapshot.runs.find((candidate) => candidate.runId === runId);
    rt.dispatch.drive(
      threadId,
      runId,
      snapshot.thread.scopeKey,
      origin?.identity ?? run?.identity ?? null,
      origin?.scope ?? scopeOf(snapshot),
    );
  };
  for (const effect of effects) {
    switch (effect.type) {
      case "take-lease":
        break; // taken by the commit itself (RunWriter)
      case "run-started":
        rt.emit({ type: "run-start", ...runIds(effect.runId) });
        drive(effect.runId);
        break;
      case "drive":
        drive(effect.runId);
        break;
      case "run-parked":
        driver.parked(snapshot, effect.runId);
        break;
      case "run-ended":
        if (effect.status === "cancelled") {
          rt.registry.abort(effect.runId, new PaiError("CONFLICT", "The run was cancelled."));
        }
        rt.leases.releaseNotNeeded(effect.runId);
        rt.registry.forget(effect.runId);
        rt.emit({
          type: "run-end",
          ...runIds(effect.runId),
          status: effect.status,
          ...(effect.error !== null ? { error: effect.error } : {}),
        });
        rt.capabilities.threadIdle(snapshot.thread.scopeKey, threadId);
        await driver.startQueued(threadId, snapshot);
        break;
      case "run-released":
        rt.registry.dropAbort(effect.runId);
        rt.capabilities.threadIdle(snapshot.thread.scopeKey, threadId);
        await driver.startQueued(threadId, snapshot);
        break;
      case "action-opened":
      case "action-resolved":
        rt.emit({
          type: effect.type === "action-opened" ? "suspend" : "action-resolved",
          ...runIds(effect.action.runId),
          toolName: effect.action.toolName,
          toolCallId: effect.action.toolCallId,
          actionId: effect.action.actionId,
          actionName: effect.action.name,
          actionKind: effect.action.kind,
          ...(effect.type === "action-resolved" ? { resolution: effect.resolution } : {}),
        } as never);
        break;
      case "finish-answer":
        await finishAnswer(rt, driver, snapshot, effect, requireOrigin(origin));
        break;
      case "resume-call":
        resumeCall(rt, driver, snapshot, effect.action, requireOrigin(origin));
        break;
      case "wake-at":
        rt.dispatch.wakeAt(threadId, snapshot.thread.scopeKey, effect.at);
        break;
    }
  }
}

function requireOrigin(
  origin: CommitOrigin | undefined,
): Required<Pick<CommitOrigin, "request">> & CommitOrigin {
  if (!origin?.request) throw new PaiError("INTERNAL", "An answer's effects need the request that answered.");
  return origin as Required<Pick<CommitOrigin, "request">> & CommitOrigin;
}

/**
 * Finishes an answered call: `afterToolResult`, `onOutput` for an output, then its outcome
 * commits under the run's lease and the run goes on. A throwing hook fails the run; the
 * answering client gets a redacted INTERNAL error.
 */
async function finishAnswer(
  rt: RuntimeCore,
  driver: RunDriver,
  snapshot: ThreadSnapshot,
  effect: { action: ActionRow; outcome: ToolOutcome },
  origin: CommitOrigin & { request: RequestContext },
): Promise<void> {
  const { action } = effect;
  const threadId = snapshot.thread.threadId;
  const runId = action.runId;
  const agent = rt.agent(snapshot.thread.agentId).definition;
  // Own registrations only: a client tool named `constructor` has none (no `onOutput` to run).
  const registration = Object.hasOwn(agent.tools, action.toolName) ? agent.tools[action.toolName] : undefined;
  const args = await origin.request.resolverArgs();
  const call = { toolName: action.toolName, toolCallId: action.toolCallId, input: origin.callInput, args };
  const release = rt.store.hold(threadId);
  let releaseLease: (() => Promise<void>) | undefined;
  let goOn = false;
  try {
    const after = await applyAfterToolResult(
      { agent, runtime: rt.hooks },
      { ...call, result: effect.outcome },
    );
    if (after.type === "hook-failed") return await failAnswer(driver, threadId, runId, after);
    const final = toOutcome(after.result, `Output of tool ${action.toolName}`, rt.options.jsonLimits);
    if (final.type === "output") {
      const failure = await observeOutput(registration, { ...call, output: final.output });
      if (failure) return await failAnswer(driver, threadId, runId, failure);
    }
    releaseLease = await rt.leases.hold(threadId, runId);
    await rt.writer.commitUnlessStale(
      threadId,
      (state, now) => decideSettle(state, { runId, toolCallId: action.toolCallId, outcome: final }, now),
      { fence: runId },
    );
    goOn = true;
  } catch (error) {
    if (!(error instanceof LeaseLostError)) throw error;
    rt.reportError({ error, phase: "run", threadId, runId });
  } finally {
    // The claim resolveAction took for this answer (`claimAnswer`).
    rt.registry.releaseAnswer(runId, action.toolCallId);
    const scope = origin.scope ?? scopeOf(snapshot);
    if (rt.dispatch.drivesHere) {
      // Queued before the lease is released, so the lease passes to the driver in process.
      if (goOn) void driver.continueRun(threadId, runId, origin.identity, scope);
      await releaseLease?.();
    } else {
      // Released first: the worker that takes the job must find the lease free.
      await releaseLease?.();
      if (goOn) rt.dispatch.drive(threadId, runId, snapshot.thread.scopeKey, origin.identity, scope);
    }
    release();
  }
}

async function failAnswer(
  driver: RunDriver,
  threadId: string,
  runId: string,
  failure: Parameters<typeof hookFailureError>[0],
): Promise<never> {
  await driver.failRun(threadId, runId, hookFailureError(failure));
  throw new PaiError("INTERNAL", REDACTED_ERROR_MESSAGE, { cause: failure.error });
}

/** Re-enters a suspended tool with the submitted value, in the background, then drives the run. */
function resumeCall(
  rt: RuntimeCore,
  driver: RunDriver,
  snapshot: ThreadSnapshot,
  action: ActionRow,
  origin: CommitOrigin & { request: RequestContext },
): void {
  const threadId = snapshot.thread.threadId;
  const runId = action.runId;
  const agentEntry = rt.agent(snapshot.thread.agentId);
  const scope = origin.scope ?? scopeOf(snapshot);
  void rt.registry.track(
    threadId,
    (async () => {
      const release = rt.store.hold(threadId);
      let releaseLease: (() => Promise<void>) | undefined;
      try {
        releaseLease = await rt.leases.hold(threadId, runId);
        const failure = await runToolCall(rt, {
          threadId,
          runId,
          toolCallId: action.toolCallId,
          toolName: action.toolName,
          input: origin.callInput,
          entry: { type: "resume", action, resume: origin.resume },
          request: origin.request,
          agentEntry,
        });
        if (failure) {
          await driver.failRun(threadId, runId, hookFailureError(failure));
          return;
        }
        if (!rt.dispatch.drivesHere) {
          // Released first: the worker that takes the job must find the lease free.
          await releaseLease();
          releaseLease = undefined;
          rt.dispatch.drive(threadId, runId, snapshot.thread.scopeKey, origin.identity, scope);
          return;
        }
        // The driver's lease hold is queued before this release, so the lease passes to it
        // in process instead of being released and taken again (two storage round trips).
        const driven = driver.continueRun(threadId, runId, origin.identity, scope);
        await releaseLease();
        releaseLease = undefined;
        await driven;
      } catch (error) {
        if (error instanceof LeaseLostError) rt.reportError({ error, phase: "run", threadId, runId });
        else await driver.failRun(threadId, runId, error);
      } finally {
        // The claim resolveAction took for this answer (`claimAnswer`), held until the call ran.
        rt.registry.releaseAnswer(runId, action.toolCallId);
        await releaseLease?.();
        release();
      }
    })(),
  );
}
