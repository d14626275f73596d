import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import type { LanguageModelV4StreamPart } from "@ai-sdk/provider";
import { PaiError } from "@pai/core";
import { afterEach, describe, expect, it } from "vitest";
import { chooseModel } from "../server/model.js";

// The OpenAI-compatible path against a real HTTP server speaking the chat completions protocol.

let server: Server | null = null;
afterEach(async () => {
  await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
  server = null;
});

type Seen = { url: string; authorization: string | undefined; body: { model: string; stream: boolean } };

async function fakeEndpoint(seen: Seen[]): Promise<string> {
  const endpoint = createServer(async (req: IncomingMessage, res) => {
    let raw = "";
    for await (const chunk of req) raw += chunk;
    seen.push({ url: req.url ?? "", authorization: req.headers.authorization, body: JSON.parse(raw) });
    res.writeHead(200, { "content-type": "text/event-stream" });
    const chunk = (delta: object, finish: string | null = null) =>
      `data: ${JSON.stringify({
        id: "c1",
        object: "chat.completion.chunk",
        created: 1,
        model: "test-model",
        choices: [{ index: 0, delta, finish_reason: finish }],
      })}\n\n`;
    res.write(chunk({ role: "assistant", content: "Hello " }));
    res.write(chunk({ content: "from the endpoint." }));
    res.write(chunk({}, "stop"));
    res.end("data: [DONE]\n\n");
  });
  server = endpoint;
  await new Promise<void>((resolve) => endpoint.listen(0, "127.0.0.1", resolve));
  return `http://127.0.0.1:${(endpoint.address() as AddressInfo).port}/v1`;
}

describe("chooseModel", () => {
  it("uses the demo model when nothing is configured", () => {
    const { model, label } = chooseModel({});
    expect(model.provider).toBe("pai-playground");
    expect(label).toContain("demo model");
  });

  it("refuses a half configuration with a sentence naming both variables", () => {
    expect(() => chooseModel({ OPENAI_BASE_URL: "http://localhost:1/v1" })).toThrow(PaiError);
    expect(() => chooseModel({ PAI_MODEL: "gpt" })).toThrow(/OPENAI_BASE_URL .* PAI_MODEL/);
  });

  it("streams from an OpenAI-compatible endpoint with the key and model name", async () => {
    const seen: Seen[] = [];
    const baseURL = await fakeEndpoint(seen);
    const { model, label } = chooseModel({
      OPENAI_BASE_URL: baseURL,
      OPENAI_API_KEY: "sk-test",
      PAI_MODEL: "test-model",
    });
    expect(label).toBe(`test-model at ${baseURL}`);
    const { stream } = await model.doStream({
      prompt: [{ role: "user", content: [{ type: "text", text: "hi" }] }],
    });
    const parts: LanguageModelV4StreamPart[] = [];
    for await (const part of stream) parts.push(part);
    const text = parts.flatMap((part) => (part.type === "text-delta" ? [part.delta] : [])).join("");
    expect(text).toBe("Hello from the endpoint.");
    expect(seen).toHaveLength(1);
    expect(seen[0]).toMatchObject({
      url: "/v1/chat/completions",
      authorization: "Bearer sk-test",
      body: { model: "test-model", stream: true },
    });
  });
});
