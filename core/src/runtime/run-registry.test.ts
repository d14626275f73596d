import { describe, expect, it } from "vitest";
import { RunRegistry } from "./run-registry.js";

// The claims that keep a driver from taking a call this process is still finishing for a crash
// leftover (and writing "Interrupted" over the answer that is about to settle it).

describe("RunRegistry: calls in flight", () => {
  it("an answer's claim outlives the end of the call's own execution", () => {
    const registry = new RunRegistry();
    // The tool is still wrapping up the execution that suspended it...
    registry.inflight("run-1").add("call-1");
    // ...when an answer to its action is accepted and claims the call.
    registry.claimAnswer("run-1", "call-1");
    registry.inflight("run-1").delete("call-1");
    expect(registry.inflightOf("run-1").has("call-1")).toBe(true);
    registry.forget("run-1");
    expect(registry.inflightOf("run-1").has("call-1")).toBe(true);
    registry.releaseAnswer("run-1", "call-1");
    expect(registry.inflightOf("run-1").has("call-1")).toBe(false);
  });

  it("claims are counted: a second request for the same action releasing its own leaves the first", () => {
    const registry = new RunRegistry();
    registry.claimAnswer("run-1", "call-1");
    registry.claimAnswer("run-1", "call-1");
    registry.releaseAnswer("run-1", "call-1");
    expect(registry.inflightOf("run-1").has("call-1")).toBe(true);
    registry.releaseAnswer("run-1", "call-1");
    expect(registry.inflightOf("run-1").size).toBe(0);
    // A release with nothing claimed changes nothing.
    registry.releaseAnswer("run-1", "call-1");
    expect(registry.inflightOf("run-1").size).toBe(0);
  });

  it("a run with nothing in flight is forgotten; its executing calls and answers are both seen", () => {
    const registry = new RunRegistry();
    registry.inflight("run-1").add("call-1");
    registry.claimAnswer("run-1", "call-2");
    expect([...registry.inflightOf("run-1")].sort()).toEqual(["call-1", "call-2"]);
    registry.inflight("run-1").delete("call-1");
    registry.releaseAnswer("run-1", "call-2");
    registry.forget("run-1");
    expect(registry.inflightOf("run-1").size).toBe(0);
  });
});
