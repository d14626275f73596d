import { INTERRUPTED_TEXT } from "@pai/core";
import { describe, expect, it } from "vitest";
import { canRetry, isInterrupted, retryTurn } from "../web/src/interrupted.js";

const ABANDONED = "Cancelled: the call was abandoned before it produced a result.";

const turn = (id: string, role: "user" | "assistant", text: string) => ({
  id,
  role,
  parts: [{ type: "text" as const, text }],
});
const user = (id: string, text: string) => turn(id, "user", text);
const assistant = (id: string) => turn(id, "assistant", "...");

describe("interrupted tool calls", () => {
  it("are calls that failed because the server stopped: after a crash or a graceful shutdown", () => {
    expect(isInterrupted("error", INTERRUPTED_TEXT)).toBe(true);
    expect(isInterrupted("error", ABANDONED)).toBe(true);
    expect(isInterrupted("error", "Deploy failed: quota exceeded")).toBe(false);
    // A person's cancel is not an interruption.
    expect(isInterrupted("cancelled", ABANDONED)).toBe(false);
    expect(isInterrupted("done", undefined)).toBe(false);
  });

  it("offer Retry only for tools the playground marks safe to run twice", () => {
    expect(canRetry("deployService", "error", INTERRUPTED_TEXT)).toBe(true);
    expect(canRetry("exportCsv", "error", ABANDONED)).toBe(true);
    // Shell commands may already have changed files; approvals and forms wait for people.
    expect(canRetry("runShell", "error", INTERRUPTED_TEXT)).toBe(false);
    expect(canRetry("requestApproval", "error", INTERRUPTED_TEXT)).toBe(false);
    expect(canRetry("deployService", "error", "Deploy failed: quota exceeded")).toBe(false);
  });

  it("retry by sending the user's turn that led to the call, until the user speaks again", () => {
    const messages = [user("u1", "hello"), assistant("a1"), user("u2", "deploy billing"), assistant("a2")];
    expect(retryTurn(messages, "a2")).toBe("deploy billing");
    expect(retryTurn(messages, "a1")).toBeNull();
    expect(retryTurn([assistant("a0")], "a0")).toBeNull();
    expect(retryTurn(messages, "gone")).toBeNull();
  });
});
