// Types of versions.mjs, for the TypeScript tests that import it.

import type { PackageManifest } from "./pack.mjs";

export type DeclaredRange = { from: string; field: "dependencies" | "peerDependencies"; range: string };

export declare function repoVersion(name: string): Promise<string | null>;
export declare function declaredRanges(manifests: PackageManifest[], name: string): DeclaredRange[];
export declare function registryVersions(name: string): Promise<string[]>;
export declare function pickVersion(options: {
  /** Packages released in lockstep (one version for all), e.g. `["@trpc/server", "@trpc/client"]`. */
  names: string[];
  manifests: PackageManifest[];
  prefer: "oldest" | "newest";
}): Promise<{ version: string; ranges: Array<DeclaredRange & { name: string }>; repoVersion: string | null }>;
