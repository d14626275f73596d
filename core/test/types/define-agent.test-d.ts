import {
  type ActionDeadline,
  type AfterToolResultHook,
  type AgentContract,
  defineAgent,
  defineTool,
  getToolName,
  type InferAgentContract,
  isToolPart,
  type PaiStaticToolPart,
  type PaiSuspensionState,
  type PaiToolPart,
  type PaiUIMessage,
  type ToolData,
  type ToolInput,
  type ToolName,
  type ToolOutput,
  type ToolSuspend,
} from "@pai/core";
import { describe, expectTypeOf, test } from "vitest";
import { z } from "zod";
import {
  type CustomerStore,
  type customerAgent,
  type exampleAgent,
  lookupCustomer,
  openDocument,
  type permissionsAgent,
} from "../fixtures/spec-examples.js";

describe("tool context at the agent boundary", () => {
  test("a tool whose context the runtime context does not satisfy needs mapContext", () => {
    defineAgent({
      runtimeContext: async ({ scope }) => ({ tenant: scope.scopeKey }),
      tools: {
        // @ts-expect-error lookupCustomer needs { customerStore }: register it with mapContext
        lookupCustomer,
      },
    });
    defineAgent({
      runtimeContext: async ({ scope }) => ({ tenant: scope.scopeKey }),
      tools: {
        // @ts-expect-error a configured registration without mapContext is checked too
        lookupCustomer: { tool: lookupCustomer, enabled: true },
      },
    });
  });

  test("a correct mapContext compiles, a wrong one does not", () => {
    const store: CustomerStore = { read: async () => ({ name: "n" }) };
    defineAgent({
      runtimeContext: async () => ({ stores: { customers: store } }),
      tools: {
        lookupCustomer: {
          tool: lookupCustomer,
          mapContext: ({ runtimeContext }) => ({ customerStore: runtimeContext.stores.customers }),
        },
      },
    });
    defineAgent({
      runtimeContext: async () => ({ stores: { customers: store } }),
      tools: {
        lookupCustomer: {
          tool: lookupCustomer,
          // @ts-expect-error mapContext must return the tool's declared context
          mapContext: ({ runtimeContext }) => ({ customers: runtimeContext.stores.customers }),
        },
      },
    });
  });

  test("direct registration is allowed when the runtime context is assignable", () => {
    const agent = defineAgent({
      runtimeContext: async () => ({
        customerStore: { read: async () => ({ name: "n" }) } as CustomerStore,
        extra: 1,
      }),
      tools: { lookupCustomer },
    });
    expectTypeOf(agent.tools.lookupCustomer.tool).toEqualTypeOf(lookupCustomer);
  });

  test("resolvers see the inferred runtime context; no runtimeContext means undefined", () => {
    defineAgent({
      runtimeContext: async () => ({ flags: { beta: true } }),
      tools: {
        openDocument: {
          tool: openDocument,
          enabled: ({ runtimeContext }) => {
            expectTypeOf(runtimeContext).toEqualTypeOf<{ flags: { beta: boolean } }>();
            return runtimeContext.flags.beta;
          },
        },
      },
      instructions: ({ runtimeContext }) => String(runtimeContext.flags.beta),
    });
    defineAgent({
      tools: {
        openDocument: {
          tool: openDocument,
          enabled: ({ runtimeContext }) => {
            expectTypeOf(runtimeContext).toEqualTypeOf<undefined>();
            return true;
          },
        },
      },
    });
  });

  test("onOutput receives input and output typed from its tool", () => {
    defineAgent({
      tools: {
        openDocument: {
          tool: openDocument,
          onOutput: ({ input, output, tool, call }) => {
            expectTypeOf(input).toEqualTypeOf<{ docId: string }>();
            expectTypeOf(output).toEqualTypeOf<{ revision: number }>();
            expectTypeOf(tool.name).toEqualTypeOf<string>();
            expectTypeOf(call.toolCallId).toEqualTypeOf<string>();
            // @ts-expect-error output has no title
            output.title;
          },
        },
      },
    });
  });

  test("afterToolResult may keep or replace a result", () => {
    const keep: AfterToolResultHook = () => undefined;
    const replace: AfterToolResultHook = ({ result }) =>
      result.type === "output" ? { type: "error", errorText: "hidden" } : result;
    // @ts-expect-error not a result shape
    const wrong: AfterToolResultHook = () => ({ type: "output" as const, text: "x" });
    expectTypeOf(keep).toBeFunction();
    expectTypeOf(replace).toBeFunction();
    expectTypeOf(wrong).toBeFunction();
  });
});

describe("agent contract", () => {
  test("names, inputs, outputs, suspend and data are typed per registration", () => {
    expectTypeOf<ToolName<typeof customerAgent>>().toEqualTypeOf<"lookupCustomer">();
    expectTypeOf<ToolInput<typeof customerAgent, "lookupCustomer">>().toEqualTypeOf<{ customerId: string }>();
    expectTypeOf<ToolOutput<typeof customerAgent, "lookupCustomer">>().toEqualTypeOf<{ name: string }>();
    expectTypeOf<ToolSuspend<typeof exampleAgent, "requestApproval">>().toEqualTypeOf<{
      approval: { input: { prompt: string }; resume: { approved: boolean; comment?: string | undefined } };
    }>();
    expectTypeOf<ToolData<typeof exampleAgent, "deployService">>().toEqualTypeOf<{
      progress: { step: string; status: "running" | "done" };
    }>();
    expectTypeOf<
      InferAgentContract<typeof permissionsAgent>["deleteAccount"]["name"]
    >().toEqualTypeOf<"deleteAccount">();
    expectTypeOf<InferAgentContract<typeof permissionsAgent>>().toExtend<AgentContract>();
    // @ts-expect-error not a registration name
    expectTypeOf<ToolInput<typeof customerAgent, "nope">>();
  });

  test("the same definition registered under two names keeps one id", () => {
    const agent = defineAgent({
      tools: { openA: openDocument, openB: { tool: openDocument, enabled: false } },
    });
    expectTypeOf<InferAgentContract<typeof agent>["openA"]["id"]>().toEqualTypeOf<"openDocument">();
    expectTypeOf<InferAgentContract<typeof agent>["openB"]["id"]>().toEqualTypeOf<"openDocument">();
  });
});

describe("projected tool parts", () => {
  type Part = PaiStaticToolPart<typeof exampleAgent>;

  test("static parts narrow by type to typed input, output, data and suspensions", () => {
    const handle = (part: Part) => {
      if (part.type === "tool-requestApproval" && part.state === "output-available") {
        expectTypeOf(part.output).toEqualTypeOf<{ approved: boolean; comment?: string | undefined }>();
        expectTypeOf(part.input).toEqualTypeOf<{ summary: string }>();
        const pending = part.pendingSuspension;
        if (pending) {
          expectTypeOf(pending.name).toEqualTypeOf<"approval">();
          expectTypeOf(pending.input).toEqualTypeOf<{ prompt: string }>();
          expectTypeOf(pending.deadline).toEqualTypeOf<ActionDeadline | null>();
        }
        const [first] = part.suspensions;
        if (first) expectTypeOf(first.deadline).toEqualTypeOf<ActionDeadline | null>();
        if (first?.deadline) expectTypeOf(first.deadline.at).toEqualTypeOf<string>();
      }
      if (part.type === "tool-deployService") {
        expectTypeOf(part.data.progress?.at(-1)?.value).toEqualTypeOf<
          { step: string; status: "running" | "done" } | undefined
        >();
      }
    };
    expectTypeOf(handle).toBeFunction();
  });

  test("submitted suspensions carry resume; optional when the payload may be undefined", () => {
    type Submitted<T> = Extract<PaiSuspensionState<T>, { state: "submitted" }>;
    expectTypeOf<Submitted<{ ok: boolean }>["resume"]>().toEqualTypeOf<{ ok: boolean }>();
    expectTypeOf<Submitted<string | undefined>>().toEqualTypeOf<
      { state: "submitted"; resolvedAt: string } & { resume?: string | undefined }
    >();
  });

  test("isToolPart narrows a message part union; getToolName reads both part kinds", () => {
    const message = {} as PaiUIMessage<typeof exampleAgent>;
    for (const part of message.parts) {
      if (isToolPart(part)) {
        expectTypeOf(part).toEqualTypeOf<PaiToolPart<typeof exampleAgent>>();
        expectTypeOf(getToolName(part)).toEqualTypeOf<string>();
      }
    }
  });

  test("an untyped schema tool (no outputSchema) still has a part", () => {
    const tool = defineTool({ id: "t.any", description: "x", inputSchema: z.object({}), execute: () => 1 });
    const agent = defineAgent({ tools: { any: tool } });
    expectTypeOf<PaiStaticToolPart<typeof agent>["type"]>().toEqualTypeOf<"tool-any">();
  });
});
