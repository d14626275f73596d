// Files conformance suite

export type { TestRuntime, TestRuntimeOptions } from "./create-test-runtime.js";
export { createTestRuntime } from "./create-test-runtime.js";
export type { FilesConformanceOptions } from "./files-conformance.js";
export { runFilesConformance } from "./files-conformance.js";
// Storage conformance suite and row builders
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
// Test runtime and scripted model (lead)
export { scriptedModel } from "./scripted-model.js";
export type {
  StorageConformanceGroup,
  StorageConformanceOptions,
  StorageConformanceSkip,
} from "./storage-conformance.js";
export { runStorageConformance, STORAGE_CONFORMANCE_GROUPS } from "./storage-conformance.js";
