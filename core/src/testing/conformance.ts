// `@pai/core/testing/conformance`: the storage and files conformance suites every adapter must
// pass. They register vitest suites (`describe`/`it`), so this entry needs `vitest` (an optional
// peer dependency of `@pai/core`); `@pai/core/testing` does not.

export type { DispatchConformanceOptions } from "./dispatch-conformance.js";
export { runDispatchConformance } from "./dispatch-conformance.js";
export type { FilesConformanceOptions } from "./files-conformance.js";
export { runFilesConformance } from "./files-conformance.js";
export type {
  StorageConformanceGroup,
  StorageConformanceOptions,
  StorageConformanceSkip,
} from "./storage-conformance.js";
export { runStorageConformance, STORAGE_CONFORMANCE_GROUPS } from "./storage-conformance.js";
