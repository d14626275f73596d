// Files conformance suite
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
export type {
  StorageConformanceGroup,
  StorageConformanceOptions,
  StorageConformanceSkip,
} from "./storage-conformance.js";
export { runStorageConformance, STORAGE_CONFORMANCE_GROUPS } from "./storage-conformance.js";
