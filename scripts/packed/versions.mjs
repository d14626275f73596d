// Picks the versions a packed-tarball host installs, from the ranges the packed packages declare
// (dependencies and peerDependencies) and the versions the npm registry has.

import { readFile } from "node:fs/promises";
import { createRequire } from "node:module";
import { join } from "node:path";
import { REPO_ROOT, run } from "./pack.mjs";

const require = createRequire(import.meta.url);
const semver = require("semver");

/** The version of `name` installed in the repo (its lockfile's choice), or null. */
export async function repoVersion(name) {
  try {
    return JSON.parse(await readFile(join(REPO_ROOT, "node_modules", name, "package.json"), "utf8")).version;
  } catch {
    return null;
  }
}

/**
 * Every semver range the given manifests declare for `name`, as `{ from, field, range }`
 * (`dependencies` and `peerDependencies`; `file:`/`workspace:` specs are left out).
 */
export function declaredRanges(manifests, name) {
  const found = [];
  for (const manifest of manifests) {
    for (const field of ["dependencies", "peerDependencies"]) {
      const range = manifest[field]?.[name];
      if (range && semver.validRange(range)) found.push({ from: manifest.name, field, range });
    }
  }
  return found;
}

/** The registry's released versions of `name` (no prereleases), oldest first. */
export async function registryVersions(name) {
  const { stdout } = await run("npm", ["view", name, "versions", "--json"], { timeoutMs: 2 * 60_000 });
  const versions = JSON.parse(stdout);
  return (Array.isArray(versions) ? versions : [versions])
    .filter((version) => semver.valid(version) && !semver.prerelease(version))
    .sort(semver.compare);
}

/**
 * The version of every package in `names` (released together, such as `@trpc/server` and
 * `@trpc/client`) that satisfies every declared range and has the repo's major version:
 * the oldest or the newest such version. Without declared ranges, the repo's own version.
 * Resolves `{ version, ranges, repoVersion }`; throws when no version fits.
 */
export async function pickVersion({ names, manifests, prefer }) {
  const ranges = names.flatMap((name) => declaredRanges(manifests, name).map((item) => ({ name, ...item })));
  const pinned = await repoVersion(names[0]);
  if (ranges.length === 0) {
    if (!pinned) throw new Error(`No declared range and no repo version for ${names.join(", ")}`);
    return { version: pinned, ranges, repoVersion: pinned };
  }
  const lists = await Promise.all(names.map((name) => registryVersions(name)));
  const common = lists.reduce((kept, list) => kept.filter((version) => list.includes(version)));
  const major = pinned ? semver.major(pinned) : null;
  const fitting = common.filter(
    (version) =>
      (major === null || semver.major(version) === major) &&
      ranges.every((item) => semver.satisfies(version, item.range)),
  );
  if (fitting.length === 0) {
    throw new Error(
      `No released version of ${names.join(" + ")} satisfies ${ranges.map((item) => `${item.from} ${item.field} ${item.range}`).join("; ")}`,
    );
  }
  const version = prefer === "oldest" ? fitting[0] : fitting.at(-1);
  return { version, ranges, repoVersion: pinned };
}
