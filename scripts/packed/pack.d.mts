// Types of pack.mjs, for the TypeScript tests that import it.

export declare const REPO_ROOT: string;
export declare const FRESH_BUILD_ENV: "PAI_PACKED_BUILD_FRESH";
/**
 * `npm install` flags for the packed tests' fresh installs. A registry request that stalls is
 * given up after a minute and retried, instead of holding the install for npm's default five
 * minutes per attempt (one stalled socket once used up a whole ten-minute budget, while the
 * registry answered other requests).
 */
export declare const NPM_INSTALL_FLAGS: readonly string[];

export type RunResult = { code: number; stdout: string; stderr: string; ms: number };
export type RunOptions = {
  cwd?: string;
  env?: Record<string, string>;
  timeoutMs?: number;
  allowFailure?: boolean;
};

export declare function childEnv(extra?: Record<string, string>): Record<string, string>;
export declare function tail(text: string, lines?: number): string;
export declare function run(command: string, args: string[], options?: RunOptions): Promise<RunResult>;

export type PackageManifest = {
  name: string;
  version: string;
  private?: boolean;
  dependencies?: Record<string, string>;
  peerDependencies?: Record<string, string>;
  peerDependenciesMeta?: Record<string, { optional?: boolean }>;
  devDependencies?: Record<string, string>;
  [key: string]: unknown;
};
export type WorkspacePackage = { dir: string; name: string; version: string; manifest: PackageManifest };

export declare function listPublishableWorkspaces(root?: string): Promise<WorkspacePackage[]>;

export type PackOptions = {
  root?: string;
  /** Where the tarballs go; created when missing. */
  destination?: string;
  /** Build first: `true` always, `false` never; default: when a `dist` is older than its sources (see PAI_PACKED_BUILD_FRESH). */
  build?: boolean | "when-stale";
  log?: (line: string) => void;
  lockWaitMs?: number;
  buildTimeoutMs?: number;
};
export type PackResult = {
  /** Absolute tarball path by package name. */
  tarballs: Record<string, string>;
  packages: WorkspacePackage[];
  /** Entry points missing from a tarball; empty when every tarball is complete. */
  problems: string[];
  /** Whether this call ran the build (false when skipped or found fresh). */
  built: boolean;
  buildMs: number;
  packMs: number;
  destination: string;
};

export declare function packWorkspaces(options?: PackOptions): Promise<PackResult>;
