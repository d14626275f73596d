import { defineAgent, defineTool } from "@pai/core";
import type { AbstractChat, ChatInit, ChatTransport, InferUIMessageChunk, UIMessage } from "ai";
import { describe, expectTypeOf, it } from "vitest";
import { z } from "zod";
import { PaiChatTransport, type PaiUIMessage } from "../src/index.js";

const deploy = defineTool({
  id: "types.deploy.v1",
  description: "Deploy",
  inputSchema: z.object({ service: z.string() }),
  outputSchema: z.object({ deployed: z.boolean() }),
  dataSchemas: { progress: z.object({ pct: z.number() }) },
  execute: async () => ({ deployed: true }),
});
const pickColor = defineTool({
  id: "types.pick-color.v1",
  description: "Pick",
  inputSchema: z.object({ prompt: z.string() }),
  outputSchema: z.object({ color: z.string() }),
  dataSchemas: { palette: z.object({ colors: z.array(z.string()) }) },
});
const review = defineTool({
  id: "types.review.v1",
  description: "Review",
  inputSchema: z.object({ doc: z.string() }),
  outputSchema: z.object({ ok: z.boolean() }),
  suspend: {
    details: {
      suspendSchema: z.object({ prompt: z.string() }),
      resumeSchema: z.object({ audience: z.string(), sections: z.number() }),
    },
  },
  execute: async (ctx) =>
    ctx.entry.type === "initial" ? ctx.suspend("details", { prompt: "?" }) : { ok: true },
});
const agent = defineAgent({ tools: { deploy, pickColor, review } });
type Message = PaiUIMessage<typeof agent>;
type Part = Message["parts"][number];

describe("PaiUIMessage", () => {
  it("narrows tool parts by name to their schemas' types", () => {
    const part = {} as Part;
    if (part.type === "tool-deploy") {
      if (part.state === "input-available") expectTypeOf(part.input).toEqualTypeOf<{ service: string }>();
      if (part.state === "output-available") expectTypeOf(part.output).toEqualTypeOf<{ deployed: boolean }>();
    }
    if (part.type === "tool-pickColor" && part.state === "output-available") {
      expectTypeOf(part.output).toEqualTypeOf<{ color: string }>();
    }
  });

  it("types every tool's data channels and the pending-action part", () => {
    const part = {} as Part;
    if (part.type === "data-progress") expectTypeOf(part.data).toEqualTypeOf<{ pct: number }>();
    if (part.type === "data-palette") expectTypeOf(part.data).toEqualTypeOf<{ colors: string[] }>();
    if (part.type === "data-pai-action") expectTypeOf(part.data.actionId).toEqualTypeOf<string>();
    // @ts-expect-error no such tool
    if (part.type === "tool-nope") expectTypeOf(part).toBeNever();
  });

  it("is a UIMessage the SDK's chat accepts with PAI's transport", () => {
    expectTypeOf<Message>().toExtend<UIMessage>();
    expectTypeOf<PaiChatTransport<Message>>().toExtend<ChatTransport<Message>>();
    expectTypeOf<InferUIMessageChunk<Message>>().not.toBeNever();
  });

  it("types a pending suspension by name, and the payload the transport submits for it", () => {
    const part = {} as Part;
    if (part.type === "data-pai-action") {
      expectTypeOf(part.data.name).toEqualTypeOf<"review.details">();
      expectTypeOf(part.data.toolName).toEqualTypeOf<"review">();
      expectTypeOf(part.data.suspendName).toEqualTypeOf<"details">();
    }
    if (part.type === "data-pai-action" && part.data.name === "review.details") {
      expectTypeOf(part.data.input).toEqualTypeOf<{ prompt: string }>();
    }
    const transport = new PaiChatTransport<Message>({ api: "/api/chat" });
    void transport.submit("thread", {
      actionId: "a1",
      name: "review.details",
      payload: { audience: "Board", sections: 3 },
    });
    const missingSections = { audience: "Board" };
    // @ts-expect-error the payload of review.details needs sections
    void transport.submit("thread", { actionId: "a1", name: "review.details", payload: missingSections });
    // @ts-expect-error no suspend point of that name
    void transport.submit("thread", { actionId: "a1", name: "review.nope", payload: {} });
    void transport.submit("thread", {
      actionId: "a1",
      name: "review.details",
      // @ts-expect-error sections is a number
      payload: { audience: "Board", sections: "3" },
    });
    // @ts-expect-error the payload is required
    void transport.submit("thread", { actionId: "a1", name: "review.details" });
  });

  it("an agent without suspend points keeps the untyped action part and payload", () => {
    const plain = defineAgent({ tools: { deploy } });
    type PlainPart = PaiUIMessage<typeof plain>["parts"][number];
    const part = {} as PlainPart;
    if (part.type === "data-pai-action") expectTypeOf(part.data.name).toEqualTypeOf<string>();
    const transport = new PaiChatTransport<PaiUIMessage<typeof plain>>({ api: "/api/chat" });
    void transport.submit("thread", { actionId: "a1", name: "any.point", payload: { anything: true } });
  });
});

/**
 * `useChat` of `@ai-sdk/react` (declared here as it is typed there, so this package's tests do
 * not depend on React): its options are the SDK's `ChatInit` and its helpers are picked from
 * `AbstractChat`.
 */
declare function useChat<M extends UIMessage = UIMessage>(
  options?: ChatInit<M>,
): Pick<AbstractChat<M>, "messages" | "addToolOutput" | "sendMessage">;

describe("useChat<PaiUIMessage<typeof agent>>", () => {
  const transport = new PaiChatTransport<Message>({ api: "/api/chat" });

  it("infers the message type from PAI's transport: no type argument at the call site", () => {
    expectTypeOf(useChat({ transport }).messages).toEqualTypeOf<Message[]>();
    expectTypeOf(useChat<Message>({ transport }).messages).toEqualTypeOf<Message[]>();
  });

  it("narrows tool parts, data parts and pending suspensions of its messages", async () => {
    const chat = useChat({ transport });
    for (const message of chat.messages) {
      for (const part of message.parts) {
        switch (part.type) {
          case "tool-deploy":
            if (part.state === "output-available")
              expectTypeOf(part.output).toEqualTypeOf<{ deployed: boolean }>();
            break;
          case "tool-review":
            if (part.state === "input-available") expectTypeOf(part.input).toEqualTypeOf<{ doc: string }>();
            break;
          case "data-progress":
            expectTypeOf(part.data).toEqualTypeOf<{ pct: number }>();
            break;
          case "data-pai-action":
            expectTypeOf(part.data.input).toEqualTypeOf<{ prompt: string }>();
            await transport.submit(message.id, {
              actionId: part.data.actionId,
              name: part.data.name,
              payload: { audience: "Board", sections: 3 },
            });
            await transport.submit(message.id, {
              actionId: part.data.actionId,
              name: part.data.name,
              // @ts-expect-error sections is a number
              payload: { audience: "Board", sections: "3" },
            });
            break;
        }
      }
    }
  });

  it("types onData by channel and addToolOutput by the tool's output schema", () => {
    const chat = useChat({
      transport,
      onData: (part) => {
        if (part.type === "data-palette") expectTypeOf(part.data).toEqualTypeOf<{ colors: string[] }>();
      },
    });
    void chat.addToolOutput({ tool: "pickColor", toolCallId: "call-1", output: { color: "red" } });
    // @ts-expect-error color is a string
    void chat.addToolOutput({ tool: "pickColor", toolCallId: "call-1", output: { color: 1 } });
    // @ts-expect-error no such tool
    void chat.addToolOutput({ tool: "nope", toolCallId: "call-1", output: {} });
  });
});
