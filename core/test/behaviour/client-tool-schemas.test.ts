import { type ClientToolSnapshot, defineAgent, defineTool } from "@pai/core";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { createTestRuntime } from "../support/test-runtime.js";
import { projectedPart, rejection } from "./_helpers.js";

// Each of these takes seconds to hours to match when the regex (or the validator's own `url`
// regex) really runs: the server must never run them for a client's schema.
const catastrophic = "^(a+)+$";
const evilString = `${"a".repeat(30)}!`;

function clientTool(
  outputSchema: ClientToolSnapshot["outputSchema"],
  name = "client.pick",
): ClientToolSnapshot {
  return {
    name,
    description: "Ask the user",
    inputSchema: { type: "object", properties: {} },
    ...(outputSchema ? { outputSchema } : {}),
  };
}

/** A thread waiting on `client.pick.output`, declared with the given output schema. */
async function waitingOn(outputSchema: ClientToolSnapshot["outputSchema"]) {
  const t = await createTestRuntime({
    agent: defineAgent({ tools: {} }),
    model: [
      { toolCalls: [{ toolName: "client.pick", toolCallId: "call-pick", input: {} }] },
      { text: "Thanks." },
    ],
  });
  const threadId = await t.createThread();
  await t.send(threadId, "pick one", { clientTools: [clientTool(outputSchema)] });
  return { t, threadId };
}

async function timed<T>(work: () => Promise<T>): Promise<{ value: T; ms: number }> {
  const started = performance.now();
  const value = await work();
  return { value, ms: performance.now() - started };
}

describe("client tool schemas never run client-chosen regular expressions", () => {
  it("a catastrophic `pattern` is not checked: the output is accepted at once, its shape still is", async () => {
    const { t, threadId } = await waitingOn({
      type: "object",
      properties: { text: { type: "string", pattern: catastrophic } },
      required: ["text"],
      additionalProperties: false,
    });
    const wrongShape = await rejection(t.submit(threadId, "client.pick.output", { text: 42 }));
    expect(wrongShape.code).toBe("INVALID_INPUT");
    expect(wrongShape.message).toContain("text");

    const { value: done, ms } = await timed(() =>
      t.submit(threadId, "client.pick.output", { text: evilString }),
    );
    expect(projectedPart(done, "call-pick")).toMatchObject({
      state: "output-available",
      output: { text: evilString },
    });
    expect(ms).toBeLessThan(3000);
  });

  it("`patternProperties` is not checked either; the properties it matched still have a shape", async () => {
    const { t, threadId } = await waitingOn({
      type: "object",
      patternProperties: { [catastrophic]: { type: "number" } },
      additionalProperties: false,
    });
    const wrongShape = await rejection(t.submit(threadId, "client.pick.output", { [evilString]: "x" }));
    expect(wrongShape.code).toBe("INVALID_INPUT");

    const { value: done, ms } = await timed(() =>
      t.submit(threadId, "client.pick.output", { [evilString]: 1 }),
    );
    expect(projectedPart(done, "call-pick").state).toBe("output-available");
    expect(ms).toBeLessThan(3000);
  });

  it("`format` is not checked (the validator's own `url` regex backtracks on crafted strings)", async () => {
    const { t, threadId } = await waitingOn({ type: "string", format: "url" });
    const { value: done, ms } = await timed(() =>
      t.submit(threadId, "client.pick.output", `http://${"a".repeat(40)}!`),
    );
    expect(projectedPart(done, "call-pick").state).toBe("output-available");
    expect(ms).toBeLessThan(3000);
  });

  it("a pattern under `not` or `oneOf` relaxes that keyword instead of refusing valid output", async () => {
    const { t, threadId } = await waitingOn({
      type: "object",
      properties: {
        id: { type: "string", not: { pattern: catastrophic } },
        contact: {
          oneOf: [
            { type: "string", format: "email" },
            { type: "string", format: "uuid" },
          ],
        },
      },
      required: ["id", "contact"],
    });
    const done = await t.submit(threadId, "client.pick.output", { id: evilString, contact: "x" });
    expect(projectedPart(done, "call-pick").state).toBe("output-available");
  });

  it("a schema whose check multiplies through `$ref` is refused quickly; the action keeps waiting", async () => {
    const defs: Record<string, object> = { d40: { type: "string" } };
    for (let level = 0; level < 40; level++) {
      defs[`d${level}`] = { allOf: [{ $ref: `#/$defs/d${level + 1}` }, { $ref: `#/$defs/d${level + 1}` }] };
    }
    const { t, threadId } = await waitingOn({ $defs: defs, $ref: "#/$defs/d0" } as never);
    const { value: refused, ms } = await timed(() =>
      rejection(t.submit(threadId, "client.pick.output", "x")),
    );
    expect(refused.code).toBe("INVALID_INPUT");
    expect(refused.message).toContain("too complex");
    expect(ms).toBeLessThan(3000);
    expect((await t.pending(threadId)).map((action) => action.actionId)).toEqual(["call-pick"]);
  });

  it("an input schema with a catastrophic pattern is only shown to the model, never run", async () => {
    const t = await createTestRuntime({
      agent: defineAgent({ tools: {} }),
      model: [
        { toolCalls: [{ toolName: "client.pick", toolCallId: "call-pick", input: { q: evilString } }] },
      ],
    });
    const threadId = await t.createThread();
    const tool: ClientToolSnapshot = {
      ...clientTool(undefined),
      inputSchema: {
        type: "object",
        properties: { q: { type: "string", pattern: catastrophic } },
        patternProperties: { [catastrophic]: { type: "string" } },
      },
    };
    const { value: waiting, ms } = await timed(() => t.send(threadId, "pick", { clientTools: [tool] }));
    expect(waiting.actions.map((action) => action.name)).toEqual(["client.pick.output"]);
    expect(ms).toBeLessThan(3000);
  });
});

describe("server-defined tool schemas are trusted and validate as defined", () => {
  it("a backend tool's `.regex()` output schema still refuses output that does not match", async () => {
    const confirm = defineTool({
      id: "test.client-tool-schemas.confirm.v1",
      description: "Ask the user for a code",
      inputSchema: z.object({}),
      outputSchema: z.object({ code: z.string().regex(/^[A-Z]{3}$/) }),
    });
    const t = await createTestRuntime({
      agent: defineAgent({ tools: { confirm } }),
      model: [{ toolCalls: [{ toolName: "confirm", toolCallId: "call-code", input: {} }] }, { text: "ok" }],
    });
    const threadId = await t.createThread();
    await t.send(threadId, "confirm");
    const invalid = await rejection(t.submit(threadId, "confirm.output", { code: "abc" }));
    expect(invalid.code).toBe("INVALID_INPUT");
    expect(invalid.message).toContain("code");
    const done = await t.submit(threadId, "confirm.output", { code: "ABC" });
    expect(projectedPart(done, "call-code").state).toBe("output-available");
  });
});
