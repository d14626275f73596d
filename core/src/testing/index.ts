// Files conformance suite
export type { FilesConformanceOptions } from "./files-conformance.js";
export { runFilesConformance } from "./files-conformance.js";
