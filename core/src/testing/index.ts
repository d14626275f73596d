// Test runtime, scripted model, tool runner and row builders. Nothing reachable from this entry
// imports vitest (or any test runner): the vitest-based conformance suites live in
// `@pai/core/testing/conformance`.

/** The runtime behind a `Pai`, for tests and benchmarks that inspect it (not a stable API). */
export type { RuntimeInternals } from "../pai/internals.js";
export { internalsOf } from "../pai/internals.js";
export type { TestRuntime, TestRuntimeOptions } from "./create-test-runtime.js";
export { createTestRuntime } from "./create-test-runtime.js";
export {
  DEFAULT_ROW_TIME,
  makeActionRow,
  makeMessageRow,
  makeRunRow,
  makeThreadRow,
  makeToolDataRow,
} from "./rows.js";
export type { RunToolOptions, RunToolResult } from "./run-tool.js";
export { runTool } from "./run-tool.js";
export type { ScriptedModel, ScriptedStep } from "./scripted-model.js";
export { scriptedModel } from "./scripted-model.js";
