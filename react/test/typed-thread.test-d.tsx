import type {
  PaiPendingAction,
  PaiThreadMessage,
  PaiThreadState,
  PendingActionView,
  ThreadClient,
} from "@pai/client";
import type { ActionResult, InferAgentContract } from "@pai/core";
import type { ProjectedMessage } from "@pai/core/protocol";
import { createPaiReact, type ThreadHandle, ToolPart, useThread } from "@pai/react";
import { describe, expectTypeOf, it } from "vitest";
import { z } from "zod";
import type { Agents, agent, MainContract } from "./fixtures.js";

const Pai = createPaiReact<Agents>();
const Main = Pai.agent("main");

type Thread = ReturnType<typeof Main.useThread>;
type Action = Thread["pending"][number];

describe("an agent binding's useThread()", () => {
  it("is typed by the agent with no type argument at the call site", () => {
    const thread = Main.useThread();
    expectTypeOf(thread).toEqualTypeOf<ThreadHandle<typeof agent>>();
    expectTypeOf(thread.client).toEqualTypeOf<ThreadClient<typeof agent>>();
    expectTypeOf(thread.state).toEqualTypeOf<PaiThreadState<typeof agent>>();
    // The same views a typed `@pai/client` thread has: nothing is re-declared here.
    expectTypeOf(thread.pending).toEqualTypeOf<PaiPendingAction<typeof agent>[]>();
    expectTypeOf(thread.messages).toEqualTypeOf<PaiThreadMessage<typeof agent>[]>();
  });

  it("pending actions are a union discriminated by name", () => {
    expectTypeOf<Action["name"]>().toEqualTypeOf<"deploy.approval" | "getSelectedText.output">();
  });

  it("submit takes the suspend point's resume payload; a wrong payload does not compile", async () => {
    const thread = Main.useThread();
    const action = thread.pending[0];
    // Before narrowing, only a payload every action accepts compiles.
    // @ts-expect-error `approved` is a boolean
    await action.submit({ approved: "yes" });
    if (action.name === "deploy.approval") {
      expectTypeOf(action.input).toEqualTypeOf<{ prompt: string }>();
      expectTypeOf(action.submit).parameter(0).toEqualTypeOf<{ approved: boolean }>();
      expectTypeOf(action.submit).returns.toEqualTypeOf<Promise<ActionResult>>();
      await action.submit({ approved: true });
      await action.submit({ approved: false }, { clientTools: [] });
      // @ts-expect-error `approved` is a boolean
      await action.submit({ approved: "yes" });
      // @ts-expect-error the resume schema needs `approved`
      await action.submit({});
      // @ts-expect-error the payload is required
      await action.submit();
    }
    if (action.name === "getSelectedText.output") {
      expectTypeOf(action.input).toEqualTypeOf<Record<string, never>>();
      await action.submit({ text: "selected" });
      // @ts-expect-error a client-routed call is answered with the tool's output
      await action.submit({ approved: true });
    }
    // Commands without payloads stay on every arm.
    expectTypeOf(action.cancel).returns.toEqualTypeOf<Promise<ActionResult>>();
    expectTypeOf(action.ref.actionId).toEqualTypeOf<string>();
  });

  it("action(name) returns the typed action; unknown names do not compile", async () => {
    const thread = Main.useThread();
    const approval = thread.action("deploy.approval");
    expectTypeOf(approval).toEqualTypeOf<Extract<Action, { name: "deploy.approval" }> | null>();
    await approval?.submit({ approved: true });
    // @ts-expect-error wrong payload for this action
    await approval?.submit({ approved: "yes" });
    // @ts-expect-error deploy has a backend execute, so it has no output action
    thread.action("deploy.output");
    // @ts-expect-error no such suspend point
    thread.action("deploy.nope");
  });

  it("Array.filter by name keeps the narrowed type", () => {
    const approvals = Main.useThread().pending.filter((action) => action.name === "deploy.approval");
    expectTypeOf(approvals[0].input).toEqualTypeOf<{ prompt: string }>();
  });

  it("tool parts of messages narrow by type and state; getPendingAction is typed per part", async () => {
    const thread = Main.useThread();
    for (const message of thread.messages) {
      for (const part of message.parts) {
        if (part.type === "tool-deploy") {
          if (part.state === "input-available") expectTypeOf(part.input).toEqualTypeOf<{ service: string }>();
          if (part.state === "output-available") expectTypeOf(part.output).toEqualTypeOf<{ url: string }>();
          expectTypeOf(part.data.progress).toEqualTypeOf<
            readonly { id: string; value: { label: string; pct: number }; updatedAt: string }[] | undefined
          >();
          if (part.pendingSuspension?.name === "approval") {
            expectTypeOf(part.pendingSuspension.input).toEqualTypeOf<{ prompt: string }>();
          }
          const action = thread.getPendingAction(message, part);
          expectTypeOf(action).toEqualTypeOf<Extract<Action, { name: "deploy.approval" }> | null>();
          await action?.submit({ approved: true });
          // @ts-expect-error `approved` is a boolean
          await action?.submit({ approved: "yes" });
        }
        if (part.type === "tool-getSelectedText" && part.state === "output-available") {
          expectTypeOf(part.output).toEqualTypeOf<{ text: string }>();
        }
        if (part.type === "dynamic-tool") {
          // Frontend-defined, provider and removed tools are dynamic parts: contract-erased.
          expectTypeOf(part.input).toEqualTypeOf<unknown>();
        }
      }
    }
    type ToolPartType = Extract<Thread["messages"][number]["parts"][number], { toolCallId: string }>["type"];
    expectTypeOf<ToolPartType>().toEqualTypeOf<"tool-deploy" | "tool-getSelectedText" | "dynamic-tool">();
  });

  it("typed messages and parts still render through ToolPart", () => {
    const thread = Main.useThread();
    const message = thread.messages[0];
    expectTypeOf(<ToolPart message={message} part={message.parts[0]} />).not.toBeAny();
  });

  it("frontend-defined config tools do not change the thread's typing", () => {
    const WithFrontend = Pai.agent("main", {
      clientTools: {
        "client.getTime": {
          description: "Local time",
          inputSchema: z.object({ zone: z.string() }),
          outputSchema: z.object({ time: z.string() }),
          execute: async () => ({ time: "12:00" }),
        },
      },
    });
    expectTypeOf(WithFrontend.useThread()).toEqualTypeOf<Thread>();
  });

  it("a typed handle is usable where an untyped one is expected", () => {
    expectTypeOf<Thread>().toExtend<ThreadHandle>();
    expectTypeOf<Action>().toExtend<PendingActionView>();
  });
});

describe("other forms", () => {
  it("a contract map types the thread like the agent does", () => {
    const ByCoreContract = createPaiReact<{ main: InferAgentContract<typeof agent> }>().agent("main");
    expectTypeOf<ReturnType<typeof ByCoreContract.useThread>["pending"][number]["name"]>().toEqualTypeOf<
      Action["name"]
    >();
    // `@pai/react`'s own contract map (no `name` per tool) works too.
    const ByReactContract = createPaiReact<{ main: MainContract }>().agent("main");
    const approval = ByReactContract.useThread().action("deploy.approval");
    // @ts-expect-error `approved` is a boolean
    void approval?.submit({ approved: "yes" });
    void approval?.submit({ approved: true });
  });

  it("useThread<typeof agent>() types a thread outside a binding", () => {
    const thread = useThread<typeof agent>();
    expectTypeOf(thread).toEqualTypeOf<Thread>();
    expectTypeOf(Pai.useThread<typeof agent>()).toEqualTypeOf<Thread>();
  });

  it("without an agent, useThread() keeps the untyped views", () => {
    const thread = useThread();
    expectTypeOf(thread.messages).toEqualTypeOf<ProjectedMessage[]>();
    expectTypeOf(thread.pending).toEqualTypeOf<PendingActionView[]>();
    expectTypeOf(thread.state).toEqualTypeOf<PaiThreadState>();
    expectTypeOf(thread.client).toEqualTypeOf<ThreadClient>();
    expectTypeOf(
      thread.getPendingAction({ id: "m" }, { toolCallId: "c" }),
    ).toEqualTypeOf<PendingActionView | null>();
    expectTypeOf(thread.action("anything.output")).toEqualTypeOf<PendingActionView | null>();
    void thread.pending[0]?.submit({ anything: true });
  });

  it("bindings of an undeclared agent are untyped", () => {
    const Open = createPaiReact().agent("anything");
    expectTypeOf(Open.useThread()).toEqualTypeOf<ThreadHandle>();
    void Open.useThread().pending[0]?.submit({ approved: "yes" });
  });
});
