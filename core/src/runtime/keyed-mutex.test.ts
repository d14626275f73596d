import { describe, expect, it } from "vitest";
import { KeyedMutex } from "./keyed-mutex.js";
import { ThreadStore } from "./thread-store.js";

const tick = () => new Promise<void>((resolve) => setImmediate(resolve));

describe("KeyedMutex", () => {
  it("runs the work of one key one at a time, in order, and other keys beside it", async () => {
    const mutex = new KeyedMutex();
    const log: string[] = [];
    const job = (name: string) => async () => {
      log.push(`${name} start`);
      await tick();
      log.push(`${name} end`);
      return name;
    };
    const results = await Promise.all([
      mutex.run("a", job("a1")),
      mutex.run("a", job("a2")),
      mutex.run("b", job("b1")),
      mutex.run("a", job("a3")),
    ]);
    expect(results).toEqual(["a1", "a2", "b1", "a3"]);
    const a = log.filter((entry) => entry.startsWith("a"));
    expect(a).toEqual(["a1 start", "a1 end", "a2 start", "a2 end", "a3 start", "a3 end"]);
    // b did not wait for a.
    expect(log.indexOf("b1 start")).toBeLessThan(log.indexOf("a1 end"));
  });

  it("passes a failure to its caller and still lets the next work run, thrown or rejected", async () => {
    const mutex = new KeyedMutex();
    const thrown = mutex.run("k", () => {
      throw new Error("sync");
    });
    const rejected = mutex.run("k", async () => {
      throw new Error("async");
    });
    const after = mutex.run("k", async () => "after");
    await expect(thrown).rejects.toThrow("sync");
    await expect(rejected).rejects.toThrow("async");
    await expect(after).resolves.toBe("after");
  });

  it("makes work that asks for its own key from its first synchronous part wait", async () => {
    const mutex = new KeyedMutex();
    const log: string[] = [];
    let inner: Promise<void> | undefined;
    await mutex.run("k", async () => {
      inner = mutex.run("k", async () => {
        log.push("inner");
      });
      log.push("outer");
    });
    await inner;
    expect(log).toEqual(["outer", "inner"]);
  });
});

describe("ThreadStore.now", () => {
  it("formats the clock's time, again whenever it moves, also backwards", () => {
    let time = Date.UTC(2026, 0, 1);
    const store = new ThreadStore({} as never, {} as never, () => new Date(time));
    expect(store.now()).toBe("2026-01-01T00:00:00.000Z");
    expect(store.now()).toBe("2026-01-01T00:00:00.000Z");
    time += 1;
    expect(store.now()).toBe("2026-01-01T00:00:00.001Z");
    time -= 60_000;
    expect(store.now()).toBe("2025-12-31T23:59:00.001Z");
  });
});
