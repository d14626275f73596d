import type { LanguageModelV4Prompt, LanguageModelV4StreamPart } from "@ai-sdk/provider";
import { describe, expect, it } from "vitest";
import { demoModel, demoReply, summarizeResult } from "../server/demo-model.js";

const ALL_TOOLS = new Set([
  "requestApproval",
  "draftReport",
  "deployService",
  "getSelectedText",
  "getBrowserInfo",
  "exportCsv",
  "adminStats",
  "runShell",
  "runCode",
]);

const user = (text: string): LanguageModelV4Prompt => [
  { role: "system", content: "instructions" },
  { role: "user", content: [{ type: "text", text }] },
];

describe("demo model", () => {
  it.each([
    ["approve the launch", "requestApproval", { summary: "Approve: launch" }],
    ["Write a report about churn", "draftReport", { topic: "churn" }],
    ["deploy billing", "deployService", { service: "billing" }],
    ["what did I select?", "getSelectedText", {}],
    ["what is my browser time zone?", "getBrowserInfo", {}],
    ["export 5 signups as csv", "exportCsv", { dataset: "signups", rows: 5 }],
    ["admin stats please", "adminStats", {}],
    ["run echo Hello > A.txt", "runShell", { command: "echo Hello > A.txt" }],
  ])("recognizes %j and calls %s", (text, toolName, input) => {
    const reply = demoReply(user(text), ALL_TOOLS);
    expect(reply.toolCall).toEqual({ toolName, input });
    expect(reply.text.length).toBeGreaterThan(0);
  });

  it("writes a code-mode program that calls orderTotal as often as asked", () => {
    const reply = demoReply(user("sum the totals of 3 orders with code"), ALL_TOOLS);
    expect(reply.toolCall).toMatchObject({
      toolName: "runCode",
      input: { code: expect.stringContaining("order < 3;") },
    });
  });

  it("does not call a tool the step does not offer (disabled or not advertised), and says why", () => {
    const offered = new Set(
      [...ALL_TOOLS].filter((name) => name !== "adminStats" && name !== "getBrowserInfo"),
    );
    const admin = demoReply(user("admin stats"), offered);
    expect(admin.toolCall).toBeUndefined();
    expect(admin.text).toContain("adminStats is disabled for you");
    expect(demoReply(user("browser time zone"), offered).text).toContain("frontend-defined tool");
  });

  it("answers anything else with help, and tool results with a summary", () => {
    expect(demoReply(user("hello"), ALL_TOOLS)).toEqual({
      text: expect.stringContaining("approve the launch"),
    });
    const prompt: LanguageModelV4Prompt = [
      ...user("deploy billing"),
      {
        role: "tool",
        content: [
          {
            type: "tool-result",
            toolCallId: "c1",
            toolName: "deployService",
            output: { type: "json", value: { service: "billing", url: "https://billing.test", steps: 5 } },
          },
        ],
      },
    ];
    expect(demoReply(prompt, ALL_TOOLS).text).toBe(
      "Deployed billing in 5 steps. It is live at https://billing.test.",
    );
    expect(
      summarizeResult({ toolName: "requestApproval", output: { type: "error-text", value: "cancelled" } }),
    ).toBe("requestApproval did not finish: cancelled");
  });

  it("streams the text in word chunks, then the tool call", async () => {
    const model = demoModel({ chunkDelayMs: 0 });
    const { stream } = await model.doStream({
      prompt: user("approve the launch"),
      tools: [{ type: "function", name: "requestApproval", inputSchema: { type: "object" } }],
    });
    const parts: LanguageModelV4StreamPart[] = [];
    for await (const part of stream) parts.push(part);
    const deltas = parts.flatMap((part) => (part.type === "text-delta" ? [part.delta] : []));
    expect(deltas).toEqual(["I ", "need ", "your ", "approval ", "first."]);
    const call = parts.find((part) => part.type === "tool-call");
    expect(call).toMatchObject({
      toolName: "requestApproval",
      input: JSON.stringify({ summary: "Approve: launch" }),
    });
    expect(parts.at(-1)).toMatchObject({ type: "finish", finishReason: { unified: "tool-calls" } });
  });
});
