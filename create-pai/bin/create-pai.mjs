#!/usr/bin/env node
// npm create pai <folder> [-- --postgres] [--pai-version <range> | --from-tarballs <dir>]

import { relative } from "node:path";
import { parseArgs } from "node:util";
import { CREATE_PAI_VERSION, DEFAULT_PAI_VERSION, scaffold } from "../lib/scaffold.mjs";

const USAGE = `Create a PAI app: a tRPC server with PAI mounted, a React page and a test.

Usage:
  npm create pai@latest <folder> [-- <options>]
  npx create-pai <folder> [options]

Options:
  --postgres               Postgres (pg + DATABASE_URL) instead of SQLite (node:sqlite)
  --pai-version <range>    version range of the @pai packages (default ${DEFAULT_PAI_VERSION})
  --from-tarballs <dir>    depend on the @pai tarballs in <dir> (file: paths), e.g. from npm pack
  -h, --help               show this help
  -v, --version            show the version of create-pai
`;

function fail(message) {
  console.error(`create-pai: ${message}\n`);
  console.error(USAGE);
  process.exit(1);
}

let parsed;
try {
  parsed = parseArgs({
    allowPositionals: true,
    options: {
      postgres: { type: "boolean", default: false },
      "pai-version": { type: "string" },
      "from-tarballs": { type: "string" },
      help: { type: "boolean", short: "h", default: false },
      version: { type: "boolean", short: "v", default: false },
    },
  });
} catch (error) {
  fail(error.message);
}
const { values, positionals } = parsed;

if (values.help) {
  console.log(USAGE);
  process.exit(0);
}
if (values.version) {
  console.log(CREATE_PAI_VERSION);
  process.exit(0);
}
if (positionals.length > 1) fail(`one folder, please (got ${positionals.join(", ")})`);

const [major, minor] = process.versions.node.split(".").map(Number);
if (major < 22 || (major === 22 && minor < 18)) {
  console.warn(`create-pai: the app needs Node 22.18 or newer (this is ${process.version}).`);
}

const folder = positionals[0] ?? "pai-app";
try {
  const app = await scaffold({
    dir: folder,
    database: values.postgres ? "postgres" : "sqlite",
    ...(values["pai-version"] ? { paiVersion: values["pai-version"] } : {}),
    ...(values["from-tarballs"] ? { tarballs: values["from-tarballs"] } : {}),
  });
  const shown = relative(process.cwd(), app.dir) || ".";
  console.log(`Created ${app.name} in ${app.dir} (${app.database === "postgres" ? "Postgres" : "SQLite"}):`);
  for (const file of app.files) console.log(`  ${file}`);
  console.log("\nNext:");
  if (shown !== ".") console.log(`  cd ${shown}`);
  console.log("  npm install");
  if (app.database === "postgres")
    console.log("  export DATABASE_URL=postgres://user:password@localhost:5432/app");
  console.log("  npm run dev      # http://localhost:3000, the demo model needs no API key");
  console.log("  npm test         # the approval flow over HTTP with a scripted model");
} catch (error) {
  console.error(`create-pai: ${error.message}`);
  process.exit(1);
}
