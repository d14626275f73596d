import { deriveToolState } from "@pai/react";
import { describe, expect, it } from "vitest";
import { toRenderData } from "../src/tool-data-view.js";

type PartState = Parameters<typeof deriveToolState>[0]["state"];
const part = (state: PartState, cancelled = false) => ({ state, cancelled });
const run = (status: "queued" | "running" | "waiting" | "completed" | "failed" | "cancelled") => ({ status });

describe("deriveToolState", () => {
  it("is streaming while the model writes the input of an active run", () => {
    expect(deriveToolState(part("input-streaming"), run("running"), false)).toBe("streaming");
  });

  it("is running while an active run works on an available input", () => {
    expect(deriveToolState(part("input-available"), run("running"), false)).toBe("running");
    expect(deriveToolState(part("input-available"), null, false)).toBe("running");
  });

  it("is waiting while the call has a pending action (native state unchanged)", () => {
    expect(deriveToolState(part("input-available"), run("waiting"), true)).toBe("waiting");
  });

  it("follows the native result states", () => {
    expect(deriveToolState(part("output-available"), run("completed"), false)).toBe("done");
    expect(deriveToolState(part("output-error"), run("completed"), false)).toBe("error");
    expect(deriveToolState(part("output-denied"), run("completed"), false)).toBe("cancelled");
  });

  it("is cancelled when the sidecar says the call was abandoned", () => {
    expect(deriveToolState(part("output-error", true), run("cancelled"), false)).toBe("cancelled");
  });

  it("a call left without a result by a run that ended is an error, or cancelled if the run was", () => {
    expect(deriveToolState(part("input-available"), run("failed"), false)).toBe("error");
    expect(deriveToolState(part("input-streaming"), run("completed"), false)).toBe("error");
    expect(deriveToolState(part("input-available"), run("cancelled"), false)).toBe("cancelled");
  });
});

describe("renderer data", () => {
  it("groups records by channel and reads unwritten channels as empty", () => {
    const data = toRenderData({
      progress: [{ id: "build", value: { pct: 1 }, updatedAt: "2026-01-01T00:00:00.000Z" }],
    });
    expect(data.progress?.records.map((record) => record.id)).toEqual(["build"]);
    expect(data.logs?.records).toEqual([]);
    expect(Object.keys(data)).toEqual(["progress"]);
    expect(JSON.parse(JSON.stringify(data))).toEqual({
      progress: { records: [{ id: "build", value: { pct: 1 }, updatedAt: "2026-01-01T00:00:00.000Z" }] },
    });
  });
});
