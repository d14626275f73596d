export type { LocalFilesOptions } from "./local-files.js";
export { localFiles } from "./local-files.js";
