import { validateSchema } from "../definitions/schema.js";
import { decideClaimResume } from "../state/deciders/run-deciders.js";
import type { ActionRow } from "../state/rows.js";
import type { ThreadSnapshot } from "../state/snapshot.js";
import type { RuntimeScope } from "./definition-shapes.js";
import { RequestContext } from "./request-context.js";
import { findCallInput } from "./resolve-action.js";
import type { RuntimeCore } from "./runtime-core.js";
import { runToolCall } from "./tool-call.js";
import type { HookFailure } from "./tool-hooks.js";

/**
 * Re-enters a suspended tool whose answer an API instance took (`ActionRow.resumeQueued`), in
 * the driver that holds the run's lease: claim it in a fenced commit, then run the tool with the
 * stored answer parsed again by the point's `resumeSchema` (it was validated when it was
 * submitted, so parsing gives the value the answering process would have passed).
 */
export async function resumeQueuedCall(
  rt: RuntimeCore,
  snapshot: ThreadSnapshot,
  runId: string,
  action: ActionRow,
  identity: unknown,
  scope: RuntimeScope,
): Promise<HookFailure | null> {
  const threadId = snapshot.thread.threadId;
  const agentEntry = rt.agent(snapshot.thread.agentId);
  const run = snapshot.runs.find((candidate) => candidate.runId === runId);
  const inflight = rt.registry.inflight(runId);
  // Claimed in memory before the commit, so this driver never takes its own call for a leftover.
  inflight.add(action.toolCallId);
  try {
    const claimed = await rt.writer.commit(threadId, (state) => decideClaimResume(state, action.actionId), {
      fence: runId,
    });
    const schema =
      agentEntry.definition.tools[action.toolName]?.tool.config.suspend?.[action.suspendName ?? ""]
        ?.resumeSchema;
    const parsed = schema ? await validateSchema(schema as never, action.resume) : null;
    const request = new RequestContext(
      agentEntry.definition,
      run?.identity ?? identity,
      scope,
      run?.clientData ?? null,
      threadId,
      rt.registry.abortSignal(runId),
    );
    return await runToolCall(rt, {
      threadId,
      runId,
      toolCallId: action.toolCallId,
      toolName: action.toolName,
      input: findCallInput(snapshot, action),
      entry: {
        type: "resume",
        action: claimed.value,
        resume: parsed?.success ? parsed.value : action.resume,
      },
      request,
      agentEntry,
    });
  } finally {
    inflight.delete(action.toolCallId);
  }
}
