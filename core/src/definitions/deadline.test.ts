import { describe, expect, it } from "vitest";
import { DEFAULT_DEADLINE_REASON, deadlineProblem, MAX_DEADLINE_MS, resolveDeadline } from "./deadline.js";

const NOW = "2030-01-01T00:00:00.000Z";

function resolved(value: unknown) {
  const result = resolveDeadline(value, NOW);
  if (!result.ok) throw new Error(`expected a deadline, got: ${result.message}`);
  return result.deadline;
}

function refused(value: unknown): string {
  const result = resolveDeadline(value, NOW);
  if (result.ok) throw new Error(`expected ${JSON.stringify(value)} to be refused`);
  expect(deadlineProblem(value)).toBe(result.message);
  return result.message;
}

describe("resolveDeadline", () => {
  it("counts `in` from now and defaults to cancel with a reason the model can read", () => {
    expect(resolved({ in: 60_000 })).toEqual({
      at: "2030-01-01T00:01:00.000Z",
      resolution: "cancel",
      reason: DEFAULT_DEADLINE_REASON,
    });
  });

  it("keeps onDeadline and reason", () => {
    expect(resolved({ in: 1, onDeadline: "fail", reason: "Too slow." })).toEqual({
      at: "2030-01-01T00:00:00.001Z",
      resolution: "fail",
      reason: "Too slow.",
    });
  });

  it("normalizes `at` from a Date or an ISO string with a zone, and allows one already past", () => {
    expect(resolved({ at: new Date("2030-02-01T10:00:00Z") })?.at).toBe("2030-02-01T10:00:00.000Z");
    expect(resolved({ at: "2030-02-01T12:00:00+02:00" })?.at).toBe("2030-02-01T10:00:00.000Z");
    expect(resolved({ at: "2030-02-01" })?.at).toBe("2030-02-01T00:00:00.000Z");
    expect(resolved({ at: "2020-01-01T00:00:00Z" })?.at).toBe("2020-01-01T00:00:00.000Z");
  });

  it("null and undefined mean no deadline", () => {
    expect(resolveDeadline(null, NOW)).toEqual({ ok: true, deadline: null });
    expect(resolveDeadline(undefined, NOW)).toEqual({ ok: true, deadline: null });
  });

  it("accepts the bounds of `in` and refuses what lies outside them", () => {
    expect(resolved({ in: MAX_DEADLINE_MS })?.at).toBe("2031-01-02T00:00:00.000Z");
    for (const bad of [0, -5, 1.5, MAX_DEADLINE_MS + 1, Number.NaN, Number.POSITIVE_INFINITY, "5m"]) {
      expect(refused({ in: bad })).toMatch(/^in must be a whole number of milliseconds from 1 to/);
    }
  });

  it("refuses instants that are not instants, or whose zone is unknown", () => {
    for (const bad of ["tomorrow", "2030-01-01T09:00", "2030-13-45T00:00:00Z", new Date(Number.NaN), 5]) {
      expect(refused({ at: bad })).toMatch(/^at must be a valid Date or an ISO 8601 instant/);
    }
    expect(refused({ at: new Date(Date.UTC(12_000, 0, 1)) })).toContain("outside the years 0000 to 9999");
  });

  it("refuses shapes that are not a deadline, naming what is wrong", () => {
    expect(refused("60s")).toContain('got "60s"');
    expect(refused({})).toBe("give in (milliseconds from now) or at (an instant)");
    expect(refused({ in: 5, at: NOW })).toBe("give either in or at, not both");
    expect(refused({ in: 5, onDeadlin: "fail" })).toContain('unknown key "onDeadlin"');
    expect(refused({ in: 5, onDeadline: "ignore" })).toContain('onDeadline must be "cancel" or "fail"');
    expect(refused({ in: 5, reason: "" })).toContain("reason must be a non-empty string");
    expect(refused({ in: 5, reason: "x".repeat(1_001) })).toContain("at most 1000 are allowed");
  });
});
