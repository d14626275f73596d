// Files: helpers for FilesV1 providers
export { createFileId, FILE_ID_PATTERN, isFileId } from "../files/file-id.js";
export { fileNotFoundError } from "../files/file-not-found.js";
export type { FileBodyReader, FileBodyReaderOptions } from "../files/read-body.js";
export { collectFileBody, fileBodyToStream, isFileBody, readFileBody } from "../files/read-body.js";
export { createStoredFileBody } from "../files/stored-file-body.js";
export type { ValidatedSaveFileInput } from "../files/validate-save-file-input.js";
export { validateSaveFileInput } from "../files/validate-save-file-input.js";
// Scheduling: for transports that let started work go first
export { yieldToEventLoop } from "../runtime/yield-to-event-loop.js";
