#!/usr/bin/env node
// Builds and packs every publishable workspace package (every one not marked `private`) with
// `npm pack`, so tests can install PAI the way a user will: from tarballs, outside the repo.
//
//   node scripts/packed/pack.mjs [destination]   # prints { "<package name>": "<tarball path>" }
//
// The packages are built first (`npm run build` of each packed workspace), unless every `dist`
// is already newer than the files it is built from (`src/`, package.json, tsup/tsconfig files,
// the root tsconfig.base.json). PAI_PACKED_BUILD_FRESH=1 skips the build without looking;
// PAI_PACKED_BUILD_FRESH=0 always builds. Callers in several processes (the packed test files)
// take turns through a lock, so one builds and the next finds the build fresh.

import { spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { mkdir, readdir, readFile, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { delimiter, dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

export const REPO_ROOT = resolve(fileURLToPath(new URL("../..", import.meta.url)));

/** `1`: every package's `dist` is fresh, skip the build; `0`: always build; unset: build when stale. */
export const FRESH_BUILD_ENV = "PAI_PACKED_BUILD_FRESH";

/**
 * `npm install` flags for the packed tests' fresh installs. A registry request that stalls is
 * given up after a minute and retried, instead of holding the install for npm's default five
 * minutes per attempt (one stalled socket once used up a whole ten-minute budget, while the
 * registry answered other requests).
 */
export const NPM_INSTALL_FLAGS = [
  "--no-audit",
  "--no-fund",
  "--prefer-offline",
  "--fetch-timeout=60000",
  "--fetch-retries=4",
];

// Variables a parent `npm run` or vitest sets that must not leak into a child npm or app
// (an inherited npm_config_local_prefix, for one, would point a child npm at this repo).
const INHERITED = /^(npm_|INIT_CWD$|VITEST|TEST$|NODE_ENV$|NODE_OPTIONS$)/i;

/**
 * The environment for child processes: this Node first in PATH (the repo pins Node 22; the
 * system one may be older), without the npm/vitest variables of the parent process.
 */
export function childEnv(extra = {}) {
  const env = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (value !== undefined && !INHERITED.test(key)) env[key] = value;
  }
  env.PATH = [dirname(process.execPath), process.env.PATH ?? ""].join(delimiter);
  return { ...env, ...extra };
}

/** The last lines of a command's output, for error messages. */
export function tail(text, lines = 40) {
  return text.trimEnd().split("\n").slice(-lines).join("\n");
}

/**
 * Runs a command to completion and resolves `{ code, stdout, stderr, ms }`. It rejects when the
 * command exits non-zero (unless `allowFailure`) or outlives `timeoutMs`; the error message
 * carries the command and the tail of its output. The child gets its own process group, so a
 * timeout ends the command and everything it started.
 */
export function run(command, args, options = {}) {
  const { cwd = REPO_ROOT, env = childEnv(), timeoutMs = 10 * 60_000, allowFailure = false } = options;
  const started = performance.now();
  const shown = [command, ...args].join(" ");
  return new Promise((resolvePromise, reject) => {
    const child = spawn(command, args, { cwd, env, detached: true, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.setEncoding("utf8").on("data", (chunk) => {
      stdout += chunk;
    });
    child.stderr.setEncoding("utf8").on("data", (chunk) => {
      stderr += chunk;
    });
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      try {
        process.kill(-child.pid, "SIGKILL");
      } catch {
        // Already gone.
      }
    }, timeoutMs);
    child.on("error", (error) => {
      clearTimeout(timer);
      reject(new Error(`${shown} (in ${cwd}) could not start: ${error.message}`));
    });
    child.on("close", (code, signal) => {
      clearTimeout(timer);
      const ms = Math.round(performance.now() - started);
      const result = { code: code ?? -1, stdout, stderr, ms };
      if (timedOut || (code !== 0 && !allowFailure)) {
        const why = timedOut ? `timed out after ${timeoutMs} ms` : `exited with ${code ?? signal}`;
        reject(
          new Error(
            `${shown} (in ${cwd}) ${why}\n--- stdout ---\n${tail(stdout)}\n--- stderr ---\n${tail(stderr)}`,
          ),
        );
        return;
      }
      resolvePromise(result);
    });
  });
}

async function readJson(path) {
  return JSON.parse(await readFile(path, "utf8"));
}

async function isDirectory(path) {
  try {
    return (await stat(path)).isDirectory();
  } catch {
    return false;
  }
}

/**
 * The workspace packages that would be published (no `private: true`), in the order of the root
 * `workspaces` array (dependencies first), as `{ dir, name, version, manifest }`. Patterns may
 * end in `/*`; other globs are not used by this repo.
 */
export async function listPublishableWorkspaces(root = REPO_ROOT) {
  const rootManifest = await readJson(join(root, "package.json"));
  const dirs = [];
  for (const pattern of rootManifest.workspaces ?? []) {
    if (pattern.endsWith("/*")) {
      const parent = pattern.slice(0, -2);
      const entries = (await readdir(join(root, parent), { withFileTypes: true }))
        .filter((entry) => entry.isDirectory())
        .map((entry) => `${parent}/${entry.name}`)
        .sort();
      dirs.push(...entries);
    } else if (pattern.includes("*")) {
      throw new Error(`pack.mjs understands workspace patterns ending in /* only, not ${pattern}`);
    } else {
      dirs.push(pattern);
    }
  }
  const packages = [];
  for (const dir of dirs) {
    if (!(await isDirectory(join(root, dir)))) continue;
    let manifest;
    try {
      manifest = await readJson(join(root, dir, "package.json"));
    } catch {
      continue;
    }
    if (manifest.private) continue;
    packages.push({ dir, name: manifest.name, version: manifest.version, manifest });
  }
  return packages;
}

/** Every file path an `exports`/`bin`/`main`/`types` entry names, normalized without `./`. */
function entryFiles(manifest) {
  const files = new Set();
  const add = (value) => {
    if (typeof value === "string") {
      if (!value.includes("*")) files.add(value.replace(/^\.\//, ""));
    } else if (value && typeof value === "object") {
      for (const nested of Object.values(value)) add(nested);
    }
  };
  add(manifest.exports);
  add(manifest.main);
  add(manifest.types);
  add(typeof manifest.bin === "string" ? manifest.bin : manifest.bin && Object.values(manifest.bin));
  return [...files];
}

const sleep = (ms) => new Promise((resolveSleep) => setTimeout(resolveSleep, ms));

function isAlive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return error.code === "EPERM";
  }
}

/** A lock shared by every process packing this checkout (a directory created atomically). */
async function withLock(stateDir, waitMs, work) {
  const lockDir = join(stateDir, "lock");
  const deadline = Date.now() + waitMs;
  await mkdir(stateDir, { recursive: true });
  for (;;) {
    try {
      await mkdir(lockDir);
      await writeFile(join(lockDir, "owner.json"), JSON.stringify({ pid: process.pid }));
      break;
    } catch (error) {
      if (error.code !== "EEXIST") throw error;
      // A lock whose owner died (crash, kill) is stale; one being created has no owner yet.
      const owner = await readJson(join(lockDir, "owner.json")).catch(() => null);
      const age = Date.now() - ((await stat(lockDir).catch(() => null))?.mtimeMs ?? Date.now());
      if (owner ? !isAlive(owner.pid) : age > 30_000) {
        await rm(lockDir, { recursive: true, force: true });
        continue;
      }
      if (Date.now() > deadline) throw new Error(`Timed out waiting for the pack lock ${lockDir}`);
      await sleep(500);
    }
  }
  try {
    return await work();
  } finally {
    await rm(lockDir, { recursive: true, force: true });
  }
}

/** Newest modification time (ms) of the files under `path`, or 0. */
async function newestMtime(path) {
  const info = await stat(path).catch(() => null);
  if (!info) return 0;
  if (!info.isDirectory()) return info.mtimeMs;
  let newest = 0;
  for (const entry of await readdir(path)) newest = Math.max(newest, await newestMtime(join(path, entry)));
  return newest;
}

/** Oldest modification time (ms) of the files under `path`; null when it has none. */
async function oldestMtime(path) {
  const info = await stat(path).catch(() => null);
  if (!info) return null;
  if (!info.isDirectory()) return info.mtimeMs;
  let oldest = null;
  for (const entry of await readdir(path)) {
    const time = await oldestMtime(join(path, entry));
    if (time !== null) oldest = oldest === null ? time : Math.min(oldest, time);
  }
  return oldest;
}

const BUILD_INPUTS = /^(src|package\.json|tsup\.config\.[cm]?[jt]s|tsconfig.*\.json)$/;

/**
 * The packages whose `dist` is missing or older than one of its inputs (tsup empties `dist`
 * and writes every file, so its oldest file dates the build).
 */
async function staleBuilds(root, packages) {
  const shared = await newestMtime(join(root, "tsconfig.base.json"));
  const stale = [];
  for (const pkg of packages) {
    if (!pkg.manifest.scripts?.build) continue;
    const dir = join(root, pkg.dir);
    const built = await oldestMtime(join(dir, "dist"));
    let newest = shared;
    for (const entry of await readdir(dir)) {
      if (BUILD_INPUTS.test(entry)) newest = Math.max(newest, await newestMtime(join(dir, entry)));
    }
    if (built === null || built <= newest) stale.push(pkg.name);
  }
  return stale;
}

/**
 * Builds (when stale) and packs every publishable workspace package into `destination`.
 * Resolves `{ tarballs, packages, problems, built, buildMs, packMs }`: `tarballs` maps each
 * package name to its tarball's absolute path; `problems` lists entry points (`exports`, `bin`,
 * `main`, `types`) a tarball lacks, which would break every install of it.
 */
export async function packWorkspaces(options = {}) {
  const root = options.root ?? REPO_ROOT;
  const destination = resolve(options.destination ?? join(tmpdir(), `pai-packed-${process.pid}`));
  const fresh = process.env[FRESH_BUILD_ENV];
  const build = options.build ?? (fresh === "1" ? false : fresh === "0" ? true : "when-stale");
  const log = options.log ?? (() => {});
  const packages = await listPublishableWorkspaces(root);
  const stateDir = join(
    tmpdir(),
    `pai-packed-state-${createHash("sha256").update(root).digest("hex").slice(0, 12)}`,
  );
  await mkdir(destination, { recursive: true });

  return withLock(stateDir, options.lockWaitMs ?? 20 * 60_000, async () => {
    const workspaceFlags = packages.flatMap((pkg) => ["-w", pkg.dir]);
    let built = false;
    let buildMs = 0;
    const stale = build === "when-stale" ? await staleBuilds(root, packages) : [];
    if (build === true || stale.length > 0) {
      log(`build: npm run build --if-present ${workspaceFlags.join(" ")}`);
      if (stale.length > 0) log(`build: stale or missing dist: ${stale.join(", ")}`);
      const result = await run("npm", ["run", "build", "--if-present", ...workspaceFlags], {
        cwd: root,
        timeoutMs: options.buildTimeoutMs ?? 15 * 60_000,
      });
      built = true;
      buildMs = result.ms;
      log(`build: done in ${result.ms} ms`);
    } else {
      log(
        build === false
          ? `build: skipped (${FRESH_BUILD_ENV}=1)`
          : "build: skipped, every dist is newer than its sources",
      );
    }

    const packed = await run(
      "npm",
      ["pack", "--json", "--ignore-scripts", "--pack-destination", destination, ...workspaceFlags],
      { cwd: root, timeoutMs: 5 * 60_000 },
    );
    const report = JSON.parse(packed.stdout.slice(packed.stdout.indexOf("[")));
    const tarballs = {};
    const problems = [];
    for (const pkg of packages) {
      const entry = report.find((item) => item.name === pkg.name);
      if (!entry) {
        problems.push(`${pkg.name}: npm pack reported no tarball`);
        continue;
      }
      tarballs[pkg.name] = join(destination, entry.filename);
      const inTarball = new Set(entry.files.map((file) => file.path));
      for (const file of entryFiles(pkg.manifest)) {
        if (!inTarball.has(file))
          problems.push(`${pkg.name}: ${file} is an entry point but not in the tarball`);
      }
    }
    log(`pack: ${Object.keys(tarballs).length} tarballs in ${destination} (${packed.ms} ms)`);
    return { tarballs, packages, problems, built, buildMs, packMs: packed.ms, destination };
  });
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const result = await packWorkspaces({
    destination: process.argv[2] ?? join(tmpdir(), "pai-packed"),
    log: (line) => console.error(line),
  });
  for (const problem of result.problems) console.error(`problem: ${problem}`);
  console.log(JSON.stringify(result.tarballs, null, 2));
  if (result.problems.length > 0) process.exitCode = 1;
}
