import { describe, expect, it } from "vitest";
import { isNativeToolPart, type ProjectedToolPart, projectThreadState } from "./project-thread-state.js";
import type { ActionRow, MessageRow, RunRow, StoredMessage, ThreadRow, ToolDataRow } from "./rows.js";
import { applyStoredEvents, type ThreadSnapshot } from "./snapshot.js";

const T0 = "2026-01-01T00:00:00.000Z";
const T1 = "2026-01-01T00:01:00.000Z";
const T2 = "2026-01-01T00:02:00.000Z";

function thread(overrides: Partial<ThreadRow> = {}): ThreadRow {
  return {
    threadId: "t1",
    scopeKey: "s1",
    userKey: null,
    agentId: "main",
    title: null,
    status: "idle",
    version: 1,
    activeRunId: null,
    metadata: null,
    createdAt: T0,
    updatedAt: T0,
    ...overrides,
  };
}

function run(overrides: Partial<RunRow> & { runId: string }): RunRow {
  return {
    threadId: "t1",
    status: "completed",
    trigger: { type: "message", messageId: "u1" },
    step: 1,
    messageId: "a1",
    clientTools: [],
    clientData: null,
    error: null,
    createdAt: T0,
    updatedAt: T0,
    finishedAt: null,
    ...overrides,
  };
}

function messageRow(message: StoredMessage, position: number, runId: string | null): MessageRow {
  return {
    threadId: "t1",
    messageId: message.id,
    position,
    role: message.role,
    message,
    runId,
    createdAt: T0,
    updatedAt: T0,
  };
}

function action(overrides: Partial<ActionRow> & { actionId: string; toolCallId: string }): ActionRow {
  return {
    threadId: "t1",
    scopeKey: "s1",
    runId: "r1",
    messageId: "a1",
    toolName: "requestApproval",
    kind: "suspend",
    suspendName: "approval",
    name: "requestApproval.approval",
    input: { prompt: "ok?" },
    state: "pending",
    episode: 1,
    createdAt: T0,
    resolvedAt: null,
    resume: null,
    reason: null,
    idempotencyKey: null,
    ...overrides,
  };
}

function data(
  overrides: Partial<ToolDataRow> & { itemId: string; value: ToolDataRow["value"] },
): ToolDataRow {
  return { threadId: "t1", toolCallId: "c1", channel: "progress", updatedAt: T0, ...overrides };
}

const userMessage: StoredMessage = { id: "u1", role: "user", parts: [{ type: "text", text: "deploy" }] };

function assistant(parts: StoredMessage["parts"]): StoredMessage {
  return { id: "a1", role: "assistant", parts };
}

function snapshot(input: Partial<ThreadSnapshot> & { messages: MessageRow[] }): ThreadSnapshot {
  return { thread: thread(), runs: [], actions: [], toolData: [], ...input };
}

function toolParts(view: ReturnType<typeof projectThreadState>): ProjectedToolPart[] {
  return view.messages.flatMap((message) =>
    message.parts.filter((part): part is ProjectedToolPart => isNativeToolPart(part)),
  );
}

describe("projectThreadState", () => {
  it("keeps non-tool parts and native tool state untouched and adds empty sidecars", () => {
    const part = {
      type: "tool-lookup",
      toolCallId: "c1",
      state: "output-available",
      input: {},
      output: 1,
    } as const;
    const view = projectThreadState(
      snapshot({
        messages: [
          messageRow(userMessage, 1, null),
          messageRow(assistant([{ type: "text", text: "hi" }, part]), 2, "r1"),
        ],
        runs: [run({ runId: "r1" })],
      }),
    );
    expect(view.version).toBe(1);
    expect(view.messages[0]).toEqual(userMessage);
    expect(view.messages[1].parts[0]).toEqual({ type: "text", text: "hi" });
    expect(view.messages[1].parts[1]).toEqual({
      ...part,
      data: {},
      suspensions: [],
      pendingSuspension: null,
      cancelled: false,
    });
    expect(view.pending).toEqual([]);
  });

  it("groups tool data by channel in write order with in-place updates", () => {
    const view = projectThreadState(
      snapshot({
        messages: [
          messageRow(
            assistant([
              { type: "tool-deploy", toolCallId: "c1", state: "input-available", input: {} },
              {
                type: "dynamic-tool",
                toolName: "other",
                toolCallId: "c2",
                state: "input-available",
                input: {},
              },
            ]),
            1,
            "r1",
          ),
        ],
        toolData: [
          data({ itemId: "build", value: { status: "done" }, updatedAt: T1 }),
          data({ itemId: "test", value: { status: "running" } }),
          data({ itemId: "log-1", channel: "logs", value: "started" }),
          data({ itemId: "x", toolCallId: "c2", value: 42 }),
        ],
      }),
    );
    const [deploy, other] = toolParts(view);
    expect(deploy.data).toEqual({
      progress: [
        { id: "build", value: { status: "done" }, updatedAt: T1 },
        { id: "test", value: { status: "running" }, updatedAt: T0 },
      ],
      logs: [{ id: "log-1", value: "started", updatedAt: T0 }],
    });
    expect(other.data).toEqual({ progress: [{ id: "x", value: 42, updatedAt: T0 }] });
  });

  it("merges transient tool data after durable items, replacing same ids in place", () => {
    const view = projectThreadState(
      snapshot({
        messages: [
          messageRow(
            assistant([{ type: "tool-deploy", toolCallId: "c1", state: "input-available", input: {} }]),
            1,
            "r1",
          ),
        ],
        toolData: [data({ itemId: "a", value: 1 }), data({ itemId: "b", value: 2 })],
      }),
      {
        transientToolData: [data({ itemId: "a", value: 10, updatedAt: T2 }), data({ itemId: "c", value: 3 })],
      },
    );
    expect(toolParts(view)[0].data.progress?.map((item) => [item.id, item.value])).toEqual([
      ["a", 10],
      ["b", 2],
      ["c", 3],
    ]);
  });

  it("lists suspension episodes by episode with the pending one as pendingSuspension", () => {
    const view = projectThreadState(
      snapshot({
        thread: thread({ activeRunId: "r1", status: "waiting" }),
        messages: [
          messageRow(
            assistant([
              { type: "tool-requestApproval", toolCallId: "c1", state: "input-available", input: {} },
            ]),
            1,
            "r1",
          ),
        ],
        runs: [run({ runId: "r1", status: "waiting" })],
        actions: [
          action({ actionId: "x3", toolCallId: "c1", episode: 3, createdAt: T2 }),
          action({
            actionId: "x1",
            toolCallId: "c1",
            episode: 1,
            state: "submitted",
            resolvedAt: T1,
            resume: { approved: false },
          }),
          action({
            actionId: "x2",
            toolCallId: "c1",
            episode: 2,
            state: "cancelled",
            resolvedAt: T1,
            createdAt: T1,
          }),
        ],
      }),
    );
    const [part] = toolParts(view);
    expect(part.state).toBe("input-available");
    expect(part.suspensions).toEqual([
      {
        actionId: "x1",
        name: "approval",
        input: { prompt: "ok?" },
        suspendedAt: T0,
        deadline: null,
        state: "submitted",
        resolvedAt: T1,
        resume: { approved: false },
      },
      {
        actionId: "x2",
        name: "approval",
        input: { prompt: "ok?" },
        suspendedAt: T1,
        deadline: null,
        state: "cancelled",
        resolvedAt: T1,
      },
      {
        actionId: "x3",
        name: "approval",
        input: { prompt: "ok?" },
        suspendedAt: T2,
        deadline: null,
        state: "pending",
      },
    ]);
    expect(part.pendingSuspension).toEqual(part.suspensions[2]);
    expect(part.cancelled).toBe(false);
    expect(view.run?.status).toBe("waiting");
  });

  it("omits resume on a submitted episode whose stored resume is null", () => {
    const view = projectThreadState(
      snapshot({
        messages: [
          messageRow(
            assistant([
              {
                type: "tool-requestApproval",
                toolCallId: "c1",
                state: "output-available",
                input: {},
                output: 1,
              },
            ]),
            1,
            "r1",
          ),
        ],
        actions: [action({ actionId: "x1", toolCallId: "c1", state: "submitted", resolvedAt: T1 })],
      }),
    );
    expect(toolParts(view)[0].suspensions[0]).not.toHaveProperty("resume");
  });

  it("shows an action's deadline on its suspension episode and on the pending action", () => {
    const deadline = { at: T2, resolution: "fail" as const, reason: "Nobody approved in time." };
    const view = projectThreadState(
      snapshot({
        messages: [
          messageRow(
            assistant([
              { type: "tool-requestApproval", toolCallId: "c1", state: "input-available", input: {} },
            ]),
            1,
            "r1",
          ),
        ],
        actions: [action({ actionId: "x1", toolCallId: "c1", deadline })],
      }),
    );
    const [part] = toolParts(view);
    expect(part.suspensions[0]?.deadline).toEqual(deadline);
    expect(part.pendingSuspension?.deadline).toEqual(deadline);
    expect(view.pending[0]?.deadline).toEqual(deadline);
  });

  it("lists pending actions with origin and ref, including output actions that are not suspensions", () => {
    const view = projectThreadState(
      snapshot({
        messages: [
          messageRow(
            assistant([
              { type: "tool-requestApproval", toolCallId: "c1", state: "input-available", input: {} },
              { type: "tool-getSelectedText", toolCallId: "c2", state: "input-available", input: {} },
            ]),
            1,
            "r1",
          ),
        ],
        actions: [
          action({ actionId: "x1", toolCallId: "c1" }),
          action({
            actionId: "c2",
            toolCallId: "c2",
            kind: "output",
            suspendName: null,
            toolName: "getSelectedText",
            name: "getSelectedText.output",
            input: {},
          }),
          action({ actionId: "old", toolCallId: "c0", state: "submitted", resolvedAt: T1 }),
        ],
      }),
    );
    expect(view.pending).toEqual([
      {
        name: "requestApproval.approval",
        input: { prompt: "ok?" },
        origin: {
          kind: "tool",
          threadId: "t1",
          toolName: "requestApproval",
          suspendName: "approval",
          messageId: "a1",
          toolCallId: "c1",
          runId: "r1",
        },
        ref: {
          kind: "tool",
          threadId: "t1",
          toolName: "requestApproval",
          suspendName: "approval",
          messageId: "a1",
          toolCallId: "c1",
          runId: "r1",
          actionId: "x1",
          name: "requestApproval.approval",
        },
        deadline: null,
      },
      {
        name: "getSelectedText.output",
        input: {},
        origin: {
          kind: "tool",
          threadId: "t1",
          toolName: "getSelectedText",
          messageId: "a1",
          toolCallId: "c2",
          runId: "r1",
        },
        ref: {
          kind: "tool",
          threadId: "t1",
          toolName: "getSelectedText",
          messageId: "a1",
          toolCallId: "c2",
          runId: "r1",
          actionId: "c2",
          name: "getSelectedText.output",
        },
        deadline: null,
      },
    ]);
    const [, selected] = toolParts(view);
    expect(selected.suspensions).toEqual([]);
    expect(selected.pendingSuspension).toBeNull();
  });

  describe("cancelled", () => {
    const errorPart = (errorText: string) =>
      ({
        type: "tool-requestApproval",
        toolCallId: "c1",
        state: "output-error",
        input: {},
        errorText,
      }) as const;

    it("is true for a Cancelled output-error whose run was cancelled", () => {
      const view = projectThreadState(
        snapshot({
          messages: [messageRow(assistant([errorPart("Cancelled: user stopped the run")]), 1, "r1")],
          runs: [run({ runId: "r1", status: "cancelled" })],
        }),
      );
      const [part] = toolParts(view);
      expect(part.cancelled).toBe(true);
      expect(part.state).toBe("output-error");
    });

    it("is true for a Cancelled output-error whose latest action was cancelled", () => {
      const view = projectThreadState(
        snapshot({
          messages: [messageRow(assistant([errorPart("Cancelled: not needed")]), 1, "r1")],
          runs: [run({ runId: "r1", status: "completed" })],
          actions: [action({ actionId: "x1", toolCallId: "c1", state: "cancelled", resolvedAt: T1 })],
        }),
      );
      expect(toolParts(view)[0].cancelled).toBe(true);
    });

    it("is false for failures, tool-authored errors and unsettled parts", () => {
      const failed = projectThreadState(
        snapshot({
          messages: [messageRow(assistant([errorPart("Cancelled: not needed")]), 1, "r1")],
          runs: [run({ runId: "r1" })],
          actions: [action({ actionId: "x1", toolCallId: "c1", state: "failed", resolvedAt: T1 })],
        }),
      );
      expect(toolParts(failed)[0].cancelled).toBe(false);

      const toolError = projectThreadState(
        snapshot({
          messages: [messageRow(assistant([errorPart("No job brief 7. List them first.")]), 1, "r1")],
          runs: [run({ runId: "r1", status: "cancelled" })],
        }),
      );
      expect(toolParts(toolError)[0].cancelled).toBe(false);

      const waiting = projectThreadState(
        snapshot({
          messages: [
            messageRow(
              assistant([
                { type: "tool-requestApproval", toolCallId: "c1", state: "input-available", input: {} },
              ]),
              1,
              "r1",
            ),
          ],
          runs: [run({ runId: "r1", status: "cancelled" })],
        }),
      );
      expect(toolParts(waiting)[0].cancelled).toBe(false);
    });
  });

  it("selects the active run, else the latest run", () => {
    const runs = [
      run({ runId: "r1", status: "waiting" }),
      run({ runId: "r2", status: "completed", createdAt: T1 }),
    ];
    expect(
      projectThreadState(snapshot({ messages: [], runs, thread: thread({ activeRunId: "r1" }) })).run?.runId,
    ).toBe("r1");
    expect(projectThreadState(snapshot({ messages: [], runs })).run?.runId).toBe("r2");
    expect(projectThreadState(snapshot({ messages: [] })).run).toBeNull();
  });

  it("projects the same view from applied committed events as from the final snapshot", () => {
    const base = snapshot({ messages: [messageRow(userMessage, 1, null)] });
    const pendingPart = {
      type: "tool-requestApproval",
      toolCallId: "c1",
      state: "input-available",
      input: {},
    } as const;
    const donePart = { ...pendingPart, state: "output-available", output: { ok: true } } as const;
    const pendingAction = action({ actionId: "x1", toolCallId: "c1" });
    const runRow = run({ runId: "r1", status: "waiting" });
    let live = applyStoredEvents(base, {
      threadId: "t1",
      version: 2,
      createdAt: T1,
      events: [
        { type: "run-upserted", run: runRow },
        { type: "message-upserted", message: messageRow(assistant([pendingPart]), 2, "r1") },
        { type: "action-upserted", action: pendingAction },
        { type: "tool-data-upserted", item: data({ itemId: "p", value: 1 }) },
      ],
    });
    expect(projectThreadState(live).pending.map((item) => item.ref.actionId)).toEqual(["x1"]);
    live = applyStoredEvents(live, {
      threadId: "t1",
      version: 3,
      createdAt: T2,
      events: [
        {
          type: "action-upserted",
          action: { ...pendingAction, state: "submitted", resolvedAt: T2, resume: true },
        },
        { type: "message-upserted", message: messageRow(assistant([donePart]), 2, "r1") },
        { type: "run-upserted", run: { ...runRow, status: "completed" } },
      ],
    });
    const fresh: ThreadSnapshot = {
      thread: thread({ version: 3, updatedAt: T2 }),
      messages: [messageRow(userMessage, 1, null), messageRow(assistant([donePart]), 2, "r1")],
      runs: [{ ...runRow, status: "completed" }],
      actions: [{ ...pendingAction, state: "submitted", resolvedAt: T2, resume: true }],
      toolData: [data({ itemId: "p", value: 1 })],
    };
    expect(projectThreadState(live)).toEqual(projectThreadState(fresh));
    expect(projectThreadState(live).pending).toEqual([]);
  });
});
