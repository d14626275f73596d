// Writes a new PAI app into a folder: the files of ../template plus a package.json.

import { existsSync } from "node:fs";
import { mkdir, readdir, readFile, writeFile } from "node:fs/promises";
import { basename, dirname, isAbsolute, join, relative, resolve, sep } from "node:path";
import { fileURLToPath } from "node:url";
import { readTarballFolder } from "./tarballs.mjs";
import { appDependencies, PAI_PACKAGES } from "./versions.mjs";

const TEMPLATE = fileURLToPath(new URL("../template", import.meta.url));
const OWN_MANIFEST = JSON.parse(await readFile(new URL("../package.json", import.meta.url), "utf8"));

export const CREATE_PAI_VERSION = OWN_MANIFEST.version;
/** The version range of the @pai packages when neither --pai-version nor --from-tarballs is given. */
export const DEFAULT_PAI_VERSION = `^${OWN_MANIFEST.version}`;
export const DATABASES = ["sqlite", "postgres"];

/** Files stored under another name, because npm drops or interprets the real one when packing. */
const RENAMES = { _gitignore: ".gitignore", "_env.example": ".env.example" };

/** A valid npm package name from a folder name. */
export function packageNameFor(dir) {
  const name = basename(resolve(dir))
    .toLowerCase()
    .replace(/[^a-z0-9._-]+/g, "-")
    .replace(/^[._-]+|[-]+$/g, "");
  return name.slice(0, 214) || "pai-app";
}

async function listFiles(dir, prefix = "") {
  const files = [];
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const path = prefix ? `${prefix}/${entry.name}` : entry.name;
    if (entry.isDirectory()) files.push(...(await listFiles(join(dir, entry.name), path)));
    else if (entry.isFile()) files.push(path);
  }
  return files.sort();
}

/** Keeps the `<!-- variant -->…<!-- /variant -->` blocks of the chosen database, drops the others. */
function selectVariant(text, database) {
  let result = text;
  for (const variant of DATABASES) {
    const block = new RegExp(`<!-- ${variant} -->\\n?([\\s\\S]*?)<!-- /${variant} -->\\n?`, "g");
    result = result.replace(block, (_match, body) => (variant === database ? body : ""));
  }
  return result;
}

/** `file:` spec of a tarball, relative to the app when possible (the app and tarballs may move together). */
function fileSpec(appDir, tarball) {
  const path = relative(appDir, tarball);
  if (isAbsolute(path)) return `file:${tarball}`;
  return `file:${path.split(sep).join("/")}`;
}

/**
 * The @pai dependencies from a folder of tarballs: the packages the app imports and every @pai
 * package they depend on (dependencies and non-optional peers), each as a `file:` spec.
 */
async function paiFromTarballs(appDir, tarballsDir) {
  const available = await readTarballFolder(tarballsDir);
  const specs = {};
  const visit = (name, neededBy) => {
    if (specs[name]) return;
    const found = available.get(name);
    if (!found) {
      const known = [...available.keys()].join(", ") || "none";
      throw new Error(`No tarball of ${name} (needed by ${neededBy}) in ${tarballsDir}. Found: ${known}`);
    }
    specs[name] = fileSpec(appDir, found.file);
    const { dependencies = {}, peerDependencies = {}, peerDependenciesMeta = {} } = found.manifest;
    const peers = Object.keys(peerDependencies).filter((peer) => !peerDependenciesMeta[peer]?.optional);
    for (const dep of [...Object.keys(dependencies), ...peers]) if (dep.startsWith("@pai/")) visit(dep, name);
  };
  for (const name of PAI_PACKAGES) visit(name, "the app");
  return specs;
}

const sortKeys = (record) =>
  Object.fromEntries(Object.entries(record).sort(([a], [b]) => a.localeCompare(b)));

/**
 * Scaffolds an app into `dir` (created when missing; an existing folder must be empty).
 * Options: `database` (`sqlite` | `postgres`), `paiVersion` (a range for the @pai packages) or
 * `tarballs` (a folder of @pai tarballs to depend on by `file:`). Resolves `{ dir, name, files }`.
 */
export async function scaffold(options) {
  const dir = resolve(options.dir);
  const database = options.database ?? "sqlite";
  if (!DATABASES.includes(database))
    throw new Error(`Unknown database ${database}: use ${DATABASES.join(" or ")}`);
  if (options.paiVersion && options.tarballs)
    throw new Error("Use --pai-version or --from-tarballs, not both.");
  if (existsSync(dir)) {
    const entries = await readdir(dir);
    if (entries.length > 0) throw new Error(`${dir} is not empty. Pick a new folder or empty this one.`);
  }
  const name = options.name ?? packageNameFor(dir);

  const pai = options.tarballs
    ? await paiFromTarballs(dir, resolve(options.tarballs))
    : Object.fromEntries(PAI_PACKAGES.map((pkg) => [pkg, options.paiVersion ?? DEFAULT_PAI_VERSION]));
  const { dependencies, devDependencies } = appDependencies(database);

  const written = [];
  await mkdir(dir, { recursive: true });
  for (const file of await listFiles(TEMPLATE)) {
    const variant = /\.(sqlite|postgres)\.ts$/.exec(file);
    if (variant && variant[1] !== database) continue;
    const base = basename(file);
    let target = variant ? file.replace(`.${variant[1]}.ts`, ".ts") : file;
    if (RENAMES[base]) target = join(dirname(file), RENAMES[base]).split(sep).join("/");
    let text = await readFile(join(TEMPLATE, file), "utf8");
    if (/\.(md|html)$|_env\.example$/.test(file))
      text = selectVariant(text, database).replaceAll("{{name}}", name);
    await mkdir(dirname(join(dir, target)), { recursive: true });
    await writeFile(join(dir, target), text);
    written.push(target);
  }

  const manifest = {
    name,
    version: "0.1.0",
    private: true,
    type: "module",
    engines: { node: ">=22.18" },
    scripts: {
      dev: "node --watch-path=server server/main.ts --dev",
      build: "tsc --noEmit && vite build",
      start: "vite build && node server/main.ts",
      serve: "node server/main.ts",
      test: "vitest run",
      typecheck: "tsc --noEmit",
    },
    dependencies: sortKeys({ ...pai, ...dependencies }),
    devDependencies: sortKeys(devDependencies),
  };
  await writeFile(join(dir, "package.json"), `${JSON.stringify(manifest, null, 2)}\n`);
  written.push("package.json");
  return { dir, name, database, files: written.sort(), dependencies: manifest.dependencies };
}
