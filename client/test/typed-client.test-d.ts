import { type ActionResult, defineAgent, defineTool, type InferAgentContract } from "@pai/core";
import type { ProjectedMessage, ProjectedToolPart } from "@pai/core/protocol";
import { describe, expectTypeOf, it } from "vitest";
import { z } from "zod";
import {
  createPaiClient,
  isToolPart,
  type PaiClient,
  type PaiPendingAction,
  type PaiThreadState,
  type PaiTransport,
  type PendingActionView,
  type ThreadClient,
} from "../src/index.js";

const requestApproval = defineTool({
  id: "test.requestApproval",
  description: "Ask a person to approve",
  inputSchema: z.object({ summary: z.string() }),
  outputSchema: z.object({ approved: z.boolean(), comment: z.string().optional() }),
  dataSchemas: { progress: z.object({ step: z.string() }) },
  suspend: {
    approval: {
      suspendSchema: z.object({ prompt: z.string() }),
      resumeSchema: z.object({ approved: z.boolean(), comment: z.string().optional() }),
    },
    // A wait point that needs no answer data.
    ack: {
      suspendSchema: z.object({ note: z.string() }),
      resumeSchema: z.undefined().optional(),
    },
  },
  execute: async (ctx) => {
    if (ctx.entry.type === "initial") return ctx.suspend("approval", { prompt: ctx.input.summary });
    return { approved: true };
  },
});

/** Client-routed: no backend execute, a client answers with the output. */
const getSelectedText = defineTool({
  id: "test.getSelectedText",
  description: "Read the selection",
  inputSchema: z.object({ maxLength: z.number() }),
  outputSchema: z.object({ text: z.string() }),
});

/** Runs on the server and never waits: it has no pending actions. */
const search = defineTool({
  id: "test.search",
  description: "Search",
  inputSchema: z.object({ query: z.string() }),
  outputSchema: z.object({ hits: z.number() }),
  execute: async () => ({ hits: 1 }),
});

const agent = defineAgent({ name: "main", tools: { requestApproval, getSelectedText, search } });

const transport = {} as PaiTransport;
const client = createPaiClient<typeof agent>({ transport });
const thread = client.thread("thread-1");
const state = thread.getState();

type Action = (typeof state.pending)[number];

describe("pending actions of a typed client", () => {
  it("are a union discriminated by literal action names", () => {
    expectTypeOf<Action["name"]>().toEqualTypeOf<
      "requestApproval.approval" | "requestApproval.ack" | "getSelectedText.output"
    >();
  });

  it("narrow input and submit payload by name", async () => {
    const action = state.pending[0];
    if (action.name === "requestApproval.approval") {
      expectTypeOf(action.input).toEqualTypeOf<{ prompt: string }>();
      expectTypeOf(action.submit).returns.toEqualTypeOf<Promise<ActionResult>>();
      await action.submit({ approved: true });
      await action.submit({ approved: false, comment: "not now" }, { clientTools: [] });
      // @ts-expect-error the resume schema needs `approved`
      await action.submit({ comment: "missing approved" });
      // @ts-expect-error `approved` is a boolean
      await action.submit({ approved: "yes" });
      // @ts-expect-error the payload is required
      await action.submit();
    }
    if (action.name === "getSelectedText.output") {
      expectTypeOf(action.input).toEqualTypeOf<{ maxLength: number }>();
      await action.submit({ text: "selected" });
      // @ts-expect-error a client-routed call is answered with the tool output
      await action.submit({ approved: true });
    }
    if (action.name === "requestApproval.ack") {
      // The resume schema accepts undefined, so the payload may be left out.
      await action.submit();
    }
    // Commands without payloads stay available on every arm.
    expectTypeOf(action.cancel).returns.toEqualTypeOf<Promise<ActionResult>>();
    expectTypeOf(action.ref.actionId).toEqualTypeOf<string>();
  });

  it("thread.action(name) returns the typed view or null; unknown names do not compile", async () => {
    const approval = thread.action("requestApproval.approval");
    expectTypeOf(approval).toEqualTypeOf<Extract<Action, { name: "requestApproval.approval" }> | null>();
    await approval?.submit({ approved: true });
    // @ts-expect-error wrong payload for this action
    await approval?.submit({ text: "x" });
    // @ts-expect-error no such action: search never waits
    thread.action("search.output");
    // @ts-expect-error no such suspend point
    thread.action("requestApproval.nope");
  });

  it("Array.filter by name keeps the narrowed type", () => {
    const outputs = state.pending.filter((action) => action.name === "getSelectedText.output");
    expectTypeOf(outputs[0].input).toEqualTypeOf<{ maxLength: number }>();
  });
});

describe("messages of a typed client", () => {
  it("tool parts narrow by tool and state to typed input, output, data and suspensions", async () => {
    for (const message of state.messages) {
      for (const part of message.parts) {
        if (isToolPart(part, "requestApproval")) {
          if (part.state === "output-available") {
            expectTypeOf(part.output).toEqualTypeOf<{ approved: boolean; comment?: string | undefined }>();
            expectTypeOf(part.input).toEqualTypeOf<{ summary: string }>();
          }
          expectTypeOf(part.data.progress).toEqualTypeOf<
            readonly { id: string; value: { step: string }; updatedAt: string }[] | undefined
          >();
          expectTypeOf(part.cancelled).toEqualTypeOf<boolean>();
          const pending = part.pendingSuspension;
          if (pending?.name === "approval") expectTypeOf(pending.input).toEqualTypeOf<{ prompt: string }>();
          for (const suspension of part.suspensions) {
            if (suspension.name === "approval" && suspension.state === "submitted") {
              expectTypeOf(suspension.resume).toEqualTypeOf<
                { approved: boolean; comment?: string | undefined } | undefined
              >();
            }
          }
          // The pending action of this part is one of this tool's actions.
          const action = thread.getPendingAction(message, part);
          expectTypeOf(action).toEqualTypeOf<Extract<
            Action,
            { name: "requestApproval.approval" | "requestApproval.ack" }
          > | null>();
          if (action?.name === "requestApproval.approval") await action.submit({ approved: true });
        }
        if (isToolPart(part, "search")) {
          if (part.state === "output-available") expectTypeOf(part.output).toEqualTypeOf<{ hits: number }>();
          // A tool that never waits has no pending action.
          expectTypeOf(thread.getPendingAction(message, part)).toEqualTypeOf<null>();
        }
        if (isToolPart(part, "getSelectedText") && part.state === "input-available") {
          expectTypeOf(part.input).toEqualTypeOf<{ maxLength: number }>();
        }
        if (part.type === "dynamic-tool") {
          // Tools outside the contract stay contract-erased.
          expectTypeOf(part.input).toEqualTypeOf<unknown>();
          expectTypeOf(thread.getPendingAction(message, part)).toEqualTypeOf<PendingActionView<
            typeof agent
          > | null>();
        }
      }
    }
  });

  it("has no part types outside the contract besides dynamic-tool", () => {
    type ToolPartType = Extract<
      (typeof state.messages)[number]["parts"][number],
      { toolCallId: string }
    >["type"];
    expectTypeOf<ToolPartType>().toEqualTypeOf<
      "tool-requestApproval" | "tool-getSelectedText" | "tool-search" | "dynamic-tool"
    >();
  });
});

describe("contract forms and the untyped client", () => {
  it("an inferred contract types the client like the agent does", () => {
    const byContract = createPaiClient<InferAgentContract<typeof agent>>({ transport });
    expectTypeOf<PaiPendingAction<InferAgentContract<typeof agent>>["name"]>().toEqualTypeOf<
      Action["name"]
    >();
    const approval = byContract.thread("t").action("requestApproval.approval");
    // @ts-expect-error wrong payload through the contract-typed client too
    void approval?.submit({ approved: 1 });
  });

  it("without a contract, payloads stay unknown and views are the low-level ones", () => {
    const untyped = createPaiClient({ transport });
    const view = untyped.thread("t").getState();
    expectTypeOf(view.pending).toEqualTypeOf<PendingActionView[]>();
    expectTypeOf(view.messages).toEqualTypeOf<ProjectedMessage[]>();
    expectTypeOf(untyped.thread("t").action("anything.output")).toEqualTypeOf<PendingActionView | null>();
    const part = {} as ProjectedToolPart;
    expectTypeOf(
      untyped.thread("t").getPendingAction({ id: "m" }, part),
    ).toEqualTypeOf<PendingActionView | null>();
    void view.pending[0]?.submit({ anything: true });
  });

  it("a typed client is usable where an untyped one is expected", () => {
    expectTypeOf(client).toExtend<PaiClient>();
    expectTypeOf(thread).toExtend<ThreadClient>();
    expectTypeOf(state).toExtend<PaiThreadState>();
    expectTypeOf<Action>().toExtend<PendingActionView>();
  });

  it("a transport takes no waitMs or wait signal: the thread client follows runs by watching", () => {
    type SendInput = Parameters<PaiTransport["threads"]["send"]>[0];
    type SubmitInput = Parameters<PaiTransport["actions"]["submit"]>[0];
    expectTypeOf<SendInput>().not.toHaveProperty("waitMs");
    expectTypeOf<SendInput>().not.toHaveProperty("signal");
    expectTypeOf<SubmitInput>().not.toHaveProperty("waitMs");
    expectTypeOf<SubmitInput>().not.toHaveProperty("signal");
    expectTypeOf<Parameters<PaiTransport["threads"]["create"]>[0]>().not.toHaveProperty("signal");
  });
});
