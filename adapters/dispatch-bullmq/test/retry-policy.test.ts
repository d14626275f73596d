import { describe, expect, it } from "vitest";
import { retryDelayMs } from "../src/retry-policy.js";

describe("retryDelayMs", () => {
  const policy = { initialDelayMs: 500, maxDelayMs: 30_000 };

  it("doubles from the first delay and stays in the upper half of each step", () => {
    for (const [attempt, ceiling] of [
      [1, 500],
      [2, 1_000],
      [3, 2_000],
      [6, 16_000],
    ] as const) {
      for (let sample = 0; sample < 50; sample++) {
        const delay = retryDelayMs(attempt, policy);
        expect(delay).toBeGreaterThanOrEqual(ceiling / 2);
        expect(delay).toBeLessThanOrEqual(ceiling);
      }
    }
  });

  it("is capped however many attempts were made", () => {
    for (const attempt of [7, 40, 10_000, 2 ** 31 - 2]) {
      const delay = retryDelayMs(attempt, policy);
      expect(delay).toBeGreaterThanOrEqual(15_000);
      expect(delay).toBeLessThanOrEqual(30_000);
    }
  });

  it("never asks BullMQ for an immediate retry or no retry", () => {
    expect(retryDelayMs(1, { initialDelayMs: 1, maxDelayMs: 1 })).toBe(1);
    expect(retryDelayMs(0, policy)).toBeGreaterThan(0);
  });
});
