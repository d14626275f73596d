import { describe, expect, it } from "vitest";
import { copyRows } from "./copy-rows.js";

/** Every object and array reachable from `value`, to check that a copy shares none of them. */
function containers(value: unknown, found = new Set<object>()): Set<object> {
  if (typeof value === "object" && value !== null && !found.has(value)) {
    found.add(value);
    for (const item of Object.values(value)) containers(item, found);
  }
  return found;
}

describe("copyRows", () => {
  const row = {
    threadId: "t1",
    position: 2,
    runId: null,
    optional: undefined,
    message: {
      id: "m1",
      parts: [
        { type: "step-start" },
        {
          type: "tool-add",
          toolCallId: "c1",
          state: "output-available",
          input: { a: 1, b: [2, 3] },
          output: 3,
        },
        { type: "text", text: "done", state: "done" },
      ],
    },
    flags: [true, false, 0, "", null],
  };

  it("copies JSON rows like structuredClone, sharing no object or array with the input", () => {
    const copied = copyRows(row);
    expect(copied).toStrictEqual(structuredClone(row));
    expect("optional" in copied).toBe(true);
    const originals = containers(row);
    for (const container of containers(copied)) expect(originals.has(container)).toBe(false);
  });

  it("keeps a __proto__ key as an own property instead of changing the prototype", () => {
    const input = JSON.parse('{"__proto__": {"polluted": true}, "safe": 1}') as Record<string, unknown>;
    const copied = copyRows(input);
    expect(Object.getPrototypeOf(copied)).toBe(Object.prototype);
    expect(Object.keys(copied)).toEqual(["__proto__", "safe"]);
    expect((copied as { polluted?: boolean }).polluted).toBeUndefined();
    expect(copied).toStrictEqual(structuredClone(input));
  });

  it("hands values that are not plain JSON to structuredClone", () => {
    const date = new Date("2024-01-01T00:00:00.000Z");
    const input = { date, map: new Map([["k", { v: 1 }]]), nested: [new Uint8Array([1, 2])] };
    const copied = copyRows(input);
    expect(copied).toStrictEqual(structuredClone(input));
    expect(copied.date).not.toBe(date);
    expect(copied.map.get("k")).not.toBe(input.map.get("k"));
  });

  it("ends cycles and keeps array holes", () => {
    const cyclic: Record<string, unknown> = { name: "loop" };
    cyclic.self = cyclic;
    const copied = copyRows(cyclic);
    expect(copied).not.toBe(cyclic);
    expect(copied.name).toBe("loop");
    // biome-ignore lint/suspicious/noSparseArray: the hole is what is tested
    const sparse = [1, , 3];
    expect(1 in copyRows(sparse)).toBe(false);
  });

  it("refuses functions and symbols, as structuredClone does", () => {
    expect(() => copyRows({ run: () => 1 })).toThrow();
    expect(() => copyRows([Symbol("s")])).toThrow();
  });
});
