export type { MemoryFilesOptions } from "./memory-files.js";
export { memoryFiles } from "./memory-files.js";
export type { MemoryStorageOptions } from "./memory-storage.js";
export { memoryStorage } from "./memory-storage.js";
