#!/usr/bin/env node
// Checks every published workspace package (every one not marked `private`) the way npm will
// ship it: packs it with `npm pack`, then runs
//
// - publint (all levels, warnings as errors): exports/types/files/format problems;
// - @arethetypeswrong/cli with the `esm-only` profile: do the types resolve for TypeScript
//   consumers, entry by entry. Our JavaScript is ES modules only (`"type": "module"`, no
//   `main`); the `require` condition points at the same files, which Node 22 loads through
//   require(esm), with CommonJS twins of the declarations (`scripts/cjs-types.mjs`). attw does
//   not model require(esm): it calls that `node16-cjs` resolution "dynamic import only" and the
//   twins "masquerading as CJS" (`false-cjs`), so that mode and rule are ignored, as is `node10`
//   (moduleResolution "node", which does not read `exports`). A CommonJS host is type-checked
//   and run for real in `scripts/test/packed`. The ESM modes (`node16` from ESM, `bundler`) are
//   checked in full;
// - a manifest check: every bare import in the packed JavaScript and declaration files is a
//   declared dependency or peer dependency (or a Node builtin), and the tarball carries
//   README.md, CHANGELOG.md and LICENSE.
//
//   node scripts/check-packages.mjs [package-dir ...]   # default: every published package
//
// Run `npm run build` first; a package with a build script but no `dist` fails. Any reported
// problem fails the run.

import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdir, mkdtemp, readdir, readFile, rm } from "node:fs/promises";
import { builtinModules, createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { publint } from "publint";
import { formatMessage } from "publint/utils";
import ts from "typescript";

const root = resolve(fileURLToPath(new URL("..", import.meta.url)));
const require = createRequire(import.meta.url);
const attwBin = join(
  require.resolve("@arethetypeswrong/cli/package.json").replace(/package\.json$/, ""),
  "dist/index.js",
);

/** Workspace package directories from the root `workspaces` (plain paths and `dir/*`). */
async function workspaceDirs() {
  const { workspaces } = JSON.parse(await readFile(join(root, "package.json"), "utf8"));
  const dirs = [];
  for (const pattern of workspaces) {
    if (pattern.endsWith("/*")) {
      const parent = join(root, pattern.slice(0, -2));
      for (const entry of (await readdir(parent, { withFileTypes: true })).sort((a, b) =>
        a.name.localeCompare(b.name),
      )) {
        if (entry.isDirectory() && existsSync(join(parent, entry.name, "package.json"))) {
          dirs.push(join(parent, entry.name));
        }
      }
    } else {
      dirs.push(join(root, pattern));
    }
  }
  return dirs;
}

/** The environment for child processes, without the npm variables of a parent `npm run`. */
function childEnv() {
  const env = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (value !== undefined && !/^npm_/i.test(key)) env[key] = value;
  }
  return env;
}

function run(command, args, options = {}) {
  return new Promise((resolvePromise, reject) => {
    const child = spawn(command, args, {
      cwd: root,
      env: childEnv(),
      stdio: ["ignore", "pipe", "pipe"],
      ...options,
    });
    let stdout = "";
    let stderr = "";
    child.stdout.setEncoding("utf8").on("data", (chunk) => {
      stdout += chunk;
    });
    child.stderr.setEncoding("utf8").on("data", (chunk) => {
      stderr += chunk;
    });
    child.on("error", reject);
    child.on("close", (code) => resolvePromise({ code, stdout, stderr }));
  });
}

/** Runs `task` over `items`, `limit` at a time, keeping the input order in the results. */
async function mapLimit(items, limit, task) {
  const results = new Array(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const index = next++;
      results[index] = await task(items[index], index);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return results;
}

/** `@scope/name/sub` -> `@scope/name`, `name/sub` -> `name`. */
function packageName(specifier) {
  const parts = specifier.split("/");
  return specifier.startsWith("@") ? parts.slice(0, 2).join("/") : parts[0];
}

/**
 * The module specifiers of one JavaScript or declaration file, parsed (comments and strings are
 * not imports): `eager` are import/export declarations and `import("x")` types, `lazy` are
 * `import("x")` calls, which load only when the code runs.
 */
function importsOf(path, text) {
  const source = ts.createSourceFile(path, text, ts.ScriptTarget.Latest, false);
  const eager = [];
  const lazy = [];
  const literal = (node) => (node && ts.isStringLiteral(node) ? node.text : undefined);
  const visit = (node) => {
    if (ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) {
      const specifier = literal(node.moduleSpecifier);
      if (specifier) eager.push(specifier);
    } else if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument)) {
      const specifier = literal(node.argument.literal);
      if (specifier) eager.push(specifier);
    } else if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword) {
      const specifier = literal(node.arguments[0]);
      if (specifier) lazy.push(specifier);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return { eager, lazy };
}

/** The files of a root export condition (`types`, `import`, `default`), nested conditions included. */
function entryFiles(target) {
  if (typeof target === "string") return [target];
  if (target && typeof target === "object") return Object.values(target).flatMap(entryFiles);
  return [];
}

async function manifestProblems(dir, pkg, files) {
  const problems = [];
  const paths = new Set(files.map((file) => file.path));
  for (const required of ["README.md", "CHANGELOG.md", "LICENSE"]) {
    if (!paths.has(required)) problems.push(`${required} is not in the tarball (add it to "files")`);
  }
  const declared = new Set([
    ...Object.keys(pkg.dependencies ?? {}),
    ...Object.keys(pkg.peerDependencies ?? {}),
  ]);
  const optional = new Set(
    Object.entries(pkg.peerDependenciesMeta ?? {})
      .filter(([, meta]) => meta?.optional)
      .map(([name]) => name),
  );
  const builtins = new Set(builtinModules);
  const external = (specifier) =>
    !specifier.startsWith(".") &&
    !specifier.startsWith("node:") &&
    !builtins.has(specifier) &&
    specifier !== pkg.name &&
    !specifier.startsWith(`${pkg.name}/`);

  const parsed = new Map();
  for (const path of paths) {
    if (!/\.(m?js|d\.m?ts)$/.test(path)) continue;
    const imports = importsOf(path, await readFile(join(dir, path), "utf8"));
    parsed.set(path, imports);
    // Every package the published code loads or names in its types must be declared.
    for (const specifier of [...imports.eager, ...imports.lazy].filter(external)) {
      if (!declared.has(packageName(specifier))) {
        problems.push(`${path} imports "${specifier}", which is neither a dependency nor a peer dependency`);
      }
    }
  }

  // The root entry (JavaScript and types) must not load an optional peer eagerly: with none of
  // them installed, `import ... from "<package>"` has to work and type-check. Subpath entries
  // (e.g. `/client`, `/testing/conformance`) exist for what needs an optional peer.
  const root = pkg.exports?.["."] ?? pkg.exports;
  const seen = new Set();
  const queue = entryFiles(root).map((file) => file.replace(/^\.\//, ""));
  while (queue.length > 0) {
    const path = queue.shift();
    if (seen.has(path)) continue;
    seen.add(path);
    const imports = parsed.get(path);
    if (!imports) continue;
    for (const specifier of imports.eager) {
      if (specifier.startsWith(".")) {
        const target = join(path, "..", specifier).replaceAll("\\", "/");
        const declaration = target.replace(/\.(m?)js$/, ".d.$1ts");
        queue.push(
          path.endsWith(".d.ts") || path.endsWith(".d.mts")
            ? paths.has(declaration)
              ? declaration
              : target
            : target,
        );
      } else if (optional.has(packageName(specifier))) {
        problems.push(
          `the root entry loads the optional peer "${specifier}" eagerly (${path}); import it lazily or in a subpath entry`,
        );
      }
    }
  }
  return [...new Set(problems)];
}

async function checkPackage(tarball, files) {
  // Everything below reads the unpacked tarball, never the workspace folder: that is what npm
  // would publish, and a build running meanwhile cannot change it.
  const unpacked = `${tarball.slice(0, -".tgz".length)}-unpacked`;
  await mkdir(unpacked);
  const untar = await run("tar", ["-xzf", tarball, "-C", unpacked]);
  if (untar.code !== 0) throw new Error(`Could not unpack ${tarball}: ${untar.stderr}`);
  const dir = join(unpacked, "package");
  const pkg = JSON.parse(await readFile(join(dir, "package.json"), "utf8"));
  const problems = [];

  // The folder holds exactly the published files, so publint needs no packing of its own.
  const lint = await publint({ pkgDir: dir, level: "suggestion", strict: true, pack: false });
  for (const message of lint.messages) {
    problems.push(
      `publint ${message.type} ${message.code}: ${formatMessage(message, lint.pkg, { color: false })}`,
    );
  }

  // attw checks what can be imported; a package with no entry point (a `bin`-only CLI) has none.
  const importable = ["exports", "main", "module", "types", "typings"].some(
    (field) => pkg[field] !== undefined,
  );
  if (importable) {
    const attw = await run(process.execPath, [
      attwBin,
      tarball,
      "--profile",
      "esm-only",
      "--ignore-rules",
      "false-cjs",
      "--no-definitely-typed",
      "--format",
      "ascii",
      "--no-color",
      "--no-emoji",
    ]);
    if (attw.code !== 0) {
      problems.push(
        `attw (--profile esm-only) exited with ${attw.code}:\n${(attw.stdout + attw.stderr).trim()}`,
      );
    }
  }

  problems.push(...(await manifestProblems(dir, pkg, files)));
  return { name: pkg.name, problems };
}

async function main() {
  const started = performance.now();
  const requested = process.argv.slice(2).map((dir) => resolve(dir));
  const candidates = requested.length > 0 ? requested : await workspaceDirs();
  const packages = [];
  for (const dir of candidates) {
    const pkg = JSON.parse(await readFile(join(dir, "package.json"), "utf8"));
    if (pkg.private) continue;
    if (pkg.scripts?.build && !existsSync(join(dir, "dist"))) {
      console.error(`${pkg.name}: no dist folder in ${relative(root, dir)}; run \`npm run build\` first.`);
      process.exitCode = 1;
      return;
    }
    packages.push(dir);
  }

  const destination = await mkdtemp(join(tmpdir(), "pai-check-packages-"));
  try {
    // One `npm pack` for all packages: the tarballs are exactly what `npm publish` would upload.
    const packed = await run("npm", [
      "pack",
      "--json",
      "--ignore-scripts",
      "--pack-destination",
      destination,
      ...packages.map((dir) => `./${relative(root, dir)}`),
    ]);
    if (packed.code !== 0) throw new Error(`npm pack failed:\n${packed.stderr}`);
    const entries = JSON.parse(packed.stdout);
    const byName = new Map(entries.map((entry) => [entry.name, entry]));

    const results = await mapLimit(packages, 2, async (dir) => {
      const { name } = JSON.parse(await readFile(join(dir, "package.json"), "utf8"));
      const entry = byName.get(name);
      if (!entry) return { name, problems: ["npm pack produced no tarball"] };
      return checkPackage(join(destination, entry.filename), entry.files);
    });

    let failed = 0;
    for (const { name, problems } of results) {
      if (problems.length === 0) {
        console.log(`ok   ${name}`);
      } else {
        failed++;
        console.log(`FAIL ${name}`);
        for (const problem of problems) console.log(`  - ${problem.replaceAll("\n", "\n    ")}`);
      }
    }
    const seconds = ((performance.now() - started) / 1000).toFixed(1);
    console.log(
      `${results.length - failed}/${results.length} packages pass publint, attw (esm-only) and the manifest check (${seconds}s).`,
    );
    if (failed > 0) process.exitCode = 1;
  } finally {
    await rm(destination, { recursive: true, force: true });
  }
}

await main();
