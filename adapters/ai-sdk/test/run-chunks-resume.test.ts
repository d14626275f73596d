import type { UIMessage, UIMessageChunk } from "ai";
import { describe, expect, it } from "vitest";
import { formatCursor, parseCursor } from "../src/server/run-cursor.js";
import { RunChunks } from "../src/server.js";
import { firstStep, isApproval, rebuild, snapshot, twoSteps } from "./run-fixtures.js";

/** Positions of `RunChunks` and `resumeAt` from them, without a server. */

function parts(message: UIMessage | undefined) {
  return message?.parts.map((part) => {
    const entries = Object.entries(part).filter(
      ([key, value]) => value !== undefined && !(part.type === "reasoning" && key === "id"),
    );
    return Object.fromEntries(entries);
  });
}

describe("RunChunks positions", () => {
  it("resuming a replay after any of its chunks, even inside a committed text part, completes the same message", async () => {
    const done = snapshot("completed", twoSteps, 3);
    const emitter = new RunChunks("r1", { isApproval });
    const all = emitter.fromSnapshot(done);
    const positions = [...emitter.positions];
    expect(positions).toHaveLength(all.length);
    expect(positions.at(-1)).toBe("x");
    expect(positions).toContain("p2.o0");
    const whole = await rebuild(all);
    for (const [index, position] of positions.entries()) {
      const resumed = new RunChunks("r1", { isApproval });
      resumed.resumeAt(done, position);
      const rest = resumed.fromSnapshot(done);
      const message = await rebuild([...all.slice(0, index + 1), ...rest]);
      expect(parts(message), `after ${position}`).toEqual(parts(whole));
      // Text, reasoning and step chunks are never sent twice: they are the replay's, once each.
      const once = (chunks: UIMessageChunk[]) =>
        chunks.filter((chunk) => /^(text|reasoning)-|-step$/.test(chunk.type));
      expect(once([...all.slice(0, index + 1), ...rest])).toEqual(once(all));
    }
  });

  it("a position holding live deltas of an uncommitted step ends them with its commit, and mutes that step's later deltas", async () => {
    const emitter = new RunChunks("r1", { isApproval });
    emitter.fromSnapshot(snapshot("running", firstStep, 4));
    const live = emitter.fromLive({
      type: "text-delta",
      threadId: "t",
      runId: "r1",
      messageId: "m1",
      delta: "Found",
    });
    expect(live.map((chunk) => chunk.type)).toEqual([
      "finish-step",
      "start-step",
      "text-start",
      "text-delta",
    ]);
    const position = emitter.positions.at(-1)!;
    expect(position).toBe("v4.p4.s2.t5");

    const resumed = new RunChunks("r1", { isApproval });
    resumed.resumeAt(snapshot("running", firstStep, 4), position);
    expect(resumed.fromSnapshot(snapshot("running", firstStep, 4))).toEqual([]);
    // Deltas in between may have been missed: the step's later deltas are not appended.
    expect(
      resumed.fromLive({ type: "text-delta", threadId: "t", runId: "r1", messageId: "m1", delta: " 2." }),
    ).toEqual([]);
    expect(resumed.fromSnapshot(snapshot("completed", twoSteps, 5))).toEqual([
      { type: "text-delta", id: "m1:2:text:0", delta: " 2." },
      { type: "text-end", id: "m1:2:text:0" },
      { type: "finish-step" },
      { type: "finish" },
    ]);
  });

  it("positions round-trip, block ids with separators included, and foreign strings are refused", () => {
    const cursor = {
      version: 7,
      parts: 3,
      started: true,
      stepOpen: false,
      live: [{ step: 2, blocks: [{ kind: "reasoning" as const, blockId: "a.b~c:d", chars: 4 }] }],
      done: false,
    };
    expect(parseCursor(formatCursor(cursor))).toEqual(cursor);
    for (const foreign of ["", "v1", "p1.q", "p1.t3", "p-1", "v1.p1.o2.o3", "p99999999999"]) {
      expect(() => parseCursor(foreign), foreign).toThrow("lastEventId");
    }
  });
});
