import v8 from "node:v8";
import { defineAgent } from "@pai/core";
import { describe, expect, it } from "vitest";
import { findUnstorableText, isUnstorableText } from "../../src/json/storable-text.js";
import { rejection } from "../behaviour/_helpers.js";
import { createTestRuntime } from "../support/test-runtime.js";

/**
 * `findUnstorableText` runs on every service call's input before any size or depth limit, so its
 * cost must follow the number of nodes, not nodes × depth: a 900 KB body nesting a wide array 250
 * levels deep used to block the event loop for seconds and allocate gigabytes of path copies.
 */

/** The walk as it was (a copy of the path per node): the reference its results must equal. */
function referenceWalk(
  value: unknown,
  skipKeys: ReadonlySet<string> = new Set(),
): Array<string | number> | null {
  const stack: Array<{ value: unknown; path: Array<string | number> }> = [{ value, path: [] }];
  while (stack.length > 0) {
    const { value: current, path } = stack.pop() as { value: unknown; path: Array<string | number> };
    if (typeof current === "string") {
      if (isUnstorableText(current)) return path;
      continue;
    }
    if (current === null || typeof current !== "object" || path.length >= 256) continue;
    if (Array.isArray(current)) {
      for (let index = current.length - 1; index >= 0; index--) {
        stack.push({ value: current[index], path: [...path, index] });
      }
      continue;
    }
    const prototype = Object.getPrototypeOf(current);
    if (prototype !== Object.prototype && prototype !== null) continue;
    for (const key of Object.keys(current).reverse()) {
      if (path.length === 0 && skipKeys.has(key)) continue;
      if (isUnstorableText(key)) return [...path, key];
      stack.push({ value: (current as Record<string, unknown>)[key], path: [...path, key] });
    }
  }
  return null;
}

/** A small deterministic generator (mulberry32), so a failure names a reproducible seed. */
function random(seed: number) {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const texts = ["ok", "", "🚢", "a\u0000b", "x\ud800y", "\udc00", "end\ud83d", "identity", "\\u0000"];

function generate(next: () => number, depth: number): unknown {
  const pick = <T>(items: readonly T[]) => items[Math.floor(next() * items.length)] as T;
  const roll = next();
  if (depth > 5 || roll < 0.35) {
    return pick<unknown>([...texts, 1, true, null, undefined, new Date(0), new Uint8Array([0])]);
  }
  const size = Math.floor(next() * 5);
  if (roll < 0.65) {
    const array: unknown[] = [];
    for (let index = 0; index < size; index++) array.push(generate(next, depth + 1));
    if (next() < 0.1) array.length += 2; // holes
    return array;
  }
  const object: Record<string, unknown> = next() < 0.1 ? Object.create(null) : {};
  for (let index = 0; index < size; index++) {
    object[next() < 0.85 ? `k${index}` : pick(texts)] = generate(next, depth + 1);
  }
  return object;
}

function chain(depth: number, leaf: unknown, make: (inner: unknown) => unknown = (inner) => [inner]) {
  let value = leaf;
  for (let index = 0; index < depth; index++) value = make(value);
  return value;
}

/** A `width`-wide array nested `depth` levels deep, one unstorable string at its very end. */
function deepAndWide(depth: number, width: number): unknown {
  const wide: unknown[] = new Array(width).fill(0);
  wide[width - 1] = "last\u0000";
  return chain(depth - 1, wide);
}

/** Garbage collections while `run` runs: an allocation-free walk causes none. */
function collectionsDuring<T>(run: () => T): { result: T; collections: number; ms: number } {
  const profiler = new v8.GCProfiler();
  profiler.start();
  const started = performance.now();
  const result = run();
  const ms = performance.now() - started;
  const collections = profiler.stop()?.statistics.length ?? 0;
  return { result, collections, ms };
}

describe("findUnstorableText", () => {
  it("finds the same path as the reference walk on generated values, with and without skipped keys", () => {
    const skip = new Set(["identity"]);
    let found = 0;
    for (let seed = 1; seed <= 3000; seed++) {
      const next = random(seed);
      const value = generate(next, 0);
      const expected = referenceWalk(value);
      expect(findUnstorableText(value), `seed ${seed}`).toEqual(expected);
      expect(findUnstorableText(value, skip), `seed ${seed} (skipping identity)`).toEqual(
        referenceWalk(value, skip),
      );
      if (expected) found += 1;
    }
    // The generator makes both clean and offending values.
    expect(found).toBeGreaterThan(300);
    expect(found).toBeLessThan(2700);
  });

  it("keeps its order and depth limit: keys before entries (the last offending key first), nothing below 256 levels", () => {
    expect(findUnstorableText("a\u0000")).toEqual([]);
    expect(findUnstorableText({ a: "\u0000", "b\u0000": 1, "c\ud800": 2 })).toEqual(["c\ud800"]);
    expect(findUnstorableText([{ a: 1 }, { b: ["ok", "x\udc00"] }])).toEqual([1, "b", 1]);
    expect(findUnstorableText({ identity: "\u0000", "identity\u0000": 1 }, new Set(["identity"]))).toEqual([
      "identity\u0000",
    ]);
    expect(findUnstorableText({ identity: { x: "\u0000" } }, new Set(["identity"]))).toBeNull();
    // Skipped keys are skipped on the input itself only.
    expect(findUnstorableText({ a: { identity: "\u0000" } }, new Set(["identity"]))).toEqual([
      "a",
      "identity",
    ]);
    expect(
      findUnstorableText({ at: new Date(0), bytes: new Uint8Array([0]), map: new Map([["\u0000", 1]]) }),
    ).toBeNull();
    // A string 256 levels down is checked; a container 256 levels down is not opened.
    const at256 = chain(256, "\u0000");
    expect(findUnstorableText(at256)).toEqual(new Array(256).fill(0));
    expect(findUnstorableText(chain(256, ["\u0000"]))).toBeNull();
    expect(findUnstorableText(chain(256, { "\u0000": 1 }))).toBeNull();
    expect(findUnstorableText(chain(255, { "k\u0000": 1 }))).toEqual([...new Array(255).fill(0), "k\u0000"]);
    // Nesting far past the limit neither overflows the stack nor is walked.
    expect(findUnstorableText(chain(200_000, "\u0000", (inner) => ({ a: inner })))).toBeNull();
  });

  it("walks a wide value nested 200 levels deep in time linear in its size, allocating nothing per node", () => {
    const value = deepAndWide(200, 200_000);
    // Warm up on a small value of the same shape, then measure against serializing the value.
    findUnstorableText(deepAndWide(200, 1_000));
    const baselineStarted = performance.now();
    JSON.stringify(value);
    const baseline = performance.now() - baselineStarted;

    const { result, collections, ms } = collectionsDuring(() => findUnstorableText(value));
    expect(result).toEqual([...new Array(199).fill(0), 199_999]);
    // Copying the path per node allocated ~300 MB here (about 90 collections) and took seconds;
    // the walk keeps one frame per level and builds a path only for what it returns.
    expect(collections).toBeLessThanOrEqual(3);
    // Generous: far above a linear walk on any machine, far below a walk that copies paths.
    expect(ms).toBeLessThan(Math.max(1_000, 50 * baseline));
  });

  it("guards a service call whose input is that value without allocating per node before the JSON limits refuse it", async () => {
    const t = await createTestRuntime({ agent: defineAgent({ tools: {} }), model: [] });
    const metadata = { deep: deepAndWide(200, 200_000) };
    const { result, collections } = collectionsDuring(() =>
      t.pai.service.threads.create({ identity: t.identity, metadata: metadata as never }),
    );
    const error = await rejection(result);
    expect(error.code).toBe("INVALID_INPUT");
    expect(error.message).toContain("NUL character");
    expect(collections).toBeLessThanOrEqual(3);
    await t.close();
  });
});
