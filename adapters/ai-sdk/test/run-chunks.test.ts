import type { UIMessage } from "ai";
import { describe, expect, it } from "vitest";
import { RunChunks } from "../src/server.js";
import { isApproval, rebuild, snapshot, twoSteps } from "./run-fixtures.js";

/** Parts without data parts, undefined fields, and the stream block id the SDK keeps on reasoning parts. */
function withoutData(message: UIMessage | undefined) {
  return message?.parts
    .filter((part) => !part.type.startsWith("data-"))
    .map((part) => {
      const entries = Object.entries(part).filter(
        ([key, value]) => value !== undefined && !(part.type === "reasoning" && key === "id"),
      );
      return Object.fromEntries(entries);
    });
}

describe("RunChunks", () => {
  it("a replay of a committed run rebuilds the stored message exactly, with tool data as data parts", async () => {
    const chunks = new RunChunks("r1", { isApproval }).fromSnapshot(snapshot("completed", twoSteps));
    expect(chunks.at(-1)).toEqual({ type: "finish" });
    const message = await rebuild(chunks);
    expect(message?.id).toBe("m1");
    expect(withoutData(message)).toEqual(twoSteps);
    expect(message?.parts.filter((part) => part.type === "data-progress")).toEqual([
      { type: "data-progress", id: "c1:i1", data: { pct: 1 } },
    ]);
  });

  it("live deltas stream first; the commit only ends their blocks (and completes missed text)", async () => {
    const emitter = new RunChunks("r1", { isApproval });
    const live = (delta: string, kind: "text-delta" | "reasoning-delta" = "text-delta", blockId = "b1") =>
      emitter.fromLive({ type: kind, threadId: "t", runId: "r1", messageId: "m1", delta, blockId, step: 1 });
    const chunks = [...live("Let "), ...live("me")];
    // The committed first step: the text holds more than the deltas that arrived.
    chunks.push(
      ...emitter.fromSnapshot(
        snapshot("running", [{ type: "step-start" }, { type: "text", text: "Let me look.", state: "done" }]),
      ),
    );
    chunks.push(
      ...emitter.fromSnapshot(
        snapshot("completed", [
          { type: "step-start" },
          { type: "text", text: "Let me look.", state: "done" },
        ]),
      ),
    );
    const message = await rebuild(chunks);
    expect(withoutData(message)).toEqual([
      { type: "step-start" },
      { type: "text", text: "Let me look.", state: "done" },
    ]);
    expect(chunks.filter((chunk) => chunk.type === "text-start")).toHaveLength(1);
  });

  it("a failed run ends with the protocol's error chunk carrying the run's recorded error", () => {
    const failed = snapshot("completed", twoSteps);
    failed.runs[0] = { ...failed.runs[0]!, status: "failed", error: "The model is unavailable." };
    const chunks = new RunChunks("r1", { isApproval }).fromSnapshot(failed);
    expect(chunks.at(-1)).toEqual({ type: "error", errorText: "The model is unavailable." });
  });
});
