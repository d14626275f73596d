export type { S3FilesClient, S3FilesOptions } from "./s3-files.js";
export { s3Files } from "./s3-files.js";
