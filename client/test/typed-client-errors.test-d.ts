import { defineAgent, defineTool } from "@pai/core";
import { describe, expectTypeOf, it } from "vitest";
import { z } from "zod";
import { createPaiClient, type PaiTransport, type PendingActionView } from "../src/index.js";

// The error below must also list the valid names; scripts/test/type-errors.test.ts asserts on its text.

const ask = defineTool({
  id: "test.errors.ask",
  description: "Ask",
  inputSchema: z.object({}),
  outputSchema: z.object({ ok: z.boolean() }),
  suspend: {
    approve: {
      suspendSchema: z.object({ prompt: z.string() }),
      resumeSchema: z.object({ approved: z.boolean() }),
    },
    note: { suspendSchema: z.object({ note: z.string() }), resumeSchema: z.object({ text: z.string() }) },
  },
  execute: async (ctx) => ctx.suspend("approve", { prompt: "x" }),
});
const pick = defineTool({
  id: "test.errors.pick",
  description: "Pick",
  inputSchema: z.object({}),
  outputSchema: z.object({ n: z.number() }),
});
const agent = defineAgent({ tools: { ask, pick } });
const thread = createPaiClient<typeof agent>({ transport: {} as PaiTransport }).thread("t");

describe("thread.action with an unknown name", () => {
  it("reports the name only: the result is an untyped view, so using it adds no error", async () => {
    const action = thread.action(
      // @ts-expect-error not an action name of this agent
      "unknown.name",
    );
    expectTypeOf(action).toEqualTypeOf<PendingActionView<typeof agent> | null>();
    // No follow-on error about an intersection of every action's payload.
    await action?.submit({ approved: true });
  });

  it("known names stay typed, unions of known names too", async () => {
    const approve = thread.action("ask.approve");
    await approve?.submit({ approved: true });
    // @ts-expect-error the payload of ask.approve
    await approve?.submit({ text: "x" });
    const either = thread.action("ask.note" as "ask.note" | "pick.output");
    expectTypeOf(either?.name).toEqualTypeOf<"ask.note" | "pick.output" | undefined>();
  });
});
