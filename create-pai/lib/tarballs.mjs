// Reads the package.json inside npm tarballs (.tgz), so --from-tarballs can find the @pai
// packages of a folder by name, whatever the files are called.

import { readdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { gunzipSync } from "node:zlib";

const BLOCK = 512;

function field(header, start, length) {
  const bytes = header.subarray(start, start + length);
  const end = bytes.indexOf(0);
  return bytes.subarray(0, end === -1 ? bytes.length : end).toString("utf8");
}

/** The `package/package.json` of an npm tarball, parsed. */
export async function readTarballManifest(path) {
  const tar = gunzipSync(await readFile(path));
  let offset = 0;
  let longName = null;
  while (offset + BLOCK <= tar.length) {
    const header = tar.subarray(offset, offset + BLOCK);
    if (header.every((byte) => byte === 0)) break;
    const size = Number.parseInt(field(header, 124, 12).trim() || "0", 8);
    const type = String.fromCharCode(header[156] || 48);
    const prefix = field(header, 345, 155);
    const name = longName ?? (prefix ? `${prefix}/${field(header, 0, 100)}` : field(header, 0, 100));
    const body = tar.subarray(offset + BLOCK, offset + BLOCK + size);
    longName = type === "L" ? body.toString("utf8").replace(/\0+$/, "") : null;
    // npm puts every file under one top folder, normally `package/`.
    if ((type === "0" || type === "\0") && /^[^/]+\/package\.json$/.test(name)) {
      return JSON.parse(body.toString("utf8"));
    }
    offset += BLOCK + Math.ceil(size / BLOCK) * BLOCK;
  }
  throw new Error(`${path} has no package.json: is it an npm tarball?`);
}

/** Every tarball of `dir` by package name (`{ file, manifest }`); the highest version wins. */
export async function readTarballFolder(dir) {
  const found = new Map();
  const files = (await readdir(dir)).filter((file) => file.endsWith(".tgz"));
  for (const file of files) {
    const path = join(dir, file);
    const manifest = await readTarballManifest(path);
    const known = found.get(manifest.name);
    if (!known || compareVersions(manifest.version, known.manifest.version) > 0) {
      found.set(manifest.name, { file: path, manifest });
    }
  }
  return found;
}

/** Compares plain `x.y.z` versions (prerelease tags sort before the release). */
function compareVersions(a, b) {
  const parse = (version) => version.split(/[.+-]/).map((part) => (/^\d+$/.test(part) ? Number(part) : part));
  const [left, right] = [parse(a), parse(b)];
  for (let index = 0; index < 3; index++) {
    if (left[index] !== right[index]) return left[index] > right[index] ? 1 : -1;
  }
  if (left.length !== right.length) return left.length === 3 ? 1 : right.length === 3 ? -1 : 0;
  return 0;
}
