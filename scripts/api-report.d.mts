// Types of api-report.mjs, for the TypeScript test that imports it.

export declare const REPO_ROOT: string;
export declare const API_DIR: string;

export type ApiEntryPoint = {
  packageName: string;
  packageDir: string;
  /** `@pai/core/protocol` */
  specifier: string;
  typesFile: string;
  /** `core-protocol.api.md` */
  fileName: string;
};

export declare function entryPoints(): ApiEntryPoint[];
/** Every report, by file name, from the built declarations. Throws when a package is not built. */
export declare function generateApiReports(): Map<string, string>;
/** The checked-in `api/*.api.md`, by file name. */
export declare function readApiReports(): Promise<Map<string, string>>;
