#!/usr/bin/env node
// Writes a CommonJS twin (`.d.cts`) of every declaration file in a package's `dist`, for the
// `require` condition of its `exports`. The JavaScript stays ES modules only; Node 22 loads it
// from `require` (require(esm)). What the twins change is how TypeScript resolves the packages
// the declarations import: from a CommonJS host, `@trpc/server` resolves to its CommonJS
// declarations, which are the ones the host's own `initTRPC()` came from. With only the ES
// declarations, a CommonJS host's procedure did not match the type `createPaiRouter` expects.
//
//   node scripts/cjs-types.mjs [package-dir]   # default: the current directory

import { readdir, readFile, writeFile } from "node:fs/promises";
import { join, resolve } from "node:path";

const dist = join(resolve(process.argv[2] ?? "."), "dist");

async function* declarations(dir) {
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) yield* declarations(path);
    else if (entry.name.endsWith(".d.ts")) yield path;
  }
}

// Relative specifiers name the twin (`./chunk.js` -> `./chunk.cjs`, read as `./chunk.d.cts`);
// package specifiers stay as they are and resolve under the `require` condition.
const relative = /((?:from|import)\s*\(?\s*["'])(\.{1,2}\/[^"']+?)\.js(["'])/g;

let written = 0;
for await (const path of declarations(dist)) {
  const text = await readFile(path, "utf8");
  await writeFile(path.replace(/\.d\.ts$/, ".d.cts"), text.replace(relative, "$1$2.cjs$3"));
  written += 1;
}
if (written === 0) {
  console.error(`cjs-types: no declaration files in ${dist}`);
  process.exit(1);
}
