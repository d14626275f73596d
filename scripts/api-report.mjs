#!/usr/bin/env node
// Writes `api/<package>[-<entry>].api.md`: the public surface of every entry point of every
// published workspace package, read from its built declaration files (what users compile
// against). Checked in, so a change of surface shows up in review; `scripts/test/api-report.test.ts`
// fails when a report is out of date.
//
//   npm run build && npm run api:report
//
// Each export is listed by name with its kind and its declaration as the compiler prints it
// (comments dropped). Declarations of the same package that an export refers to but no entry
// exports (engine internals leaking through a public type, say) are listed after them, so a
// leak is reviewed as deliberately as an export. Output depends only on the declaration
// files: no paths, hashes, dates or locale-dependent ordering.

import { existsSync, readFileSync, realpathSync } from "node:fs";
import { mkdir, readdir, rm, writeFile } from "node:fs/promises";
import { dirname, join, relative, resolve, sep } from "node:path";
import { fileURLToPath } from "node:url";
import ts from "typescript";

export const REPO_ROOT = resolve(fileURLToPath(new URL("..", import.meta.url)));
export const API_DIR = join(REPO_ROOT, "api");

const toPosix = (path) => path.split(sep).join("/");
const byCodePoint = (a, b) => (a < b ? -1 : a > b ? 1 : 0);

/** Workspace package directories from the root `workspaces` (plain paths and `dir/*`). */
function workspaceDirs() {
  const { workspaces } = JSON.parse(readFileSync(join(REPO_ROOT, "package.json"), "utf8"));
  return workspaces.flatMap((pattern) => {
    if (!pattern.endsWith("/*")) return [join(REPO_ROOT, pattern)];
    const parent = join(REPO_ROOT, pattern.slice(0, -2));
    return ts.sys
      .getDirectories(parent)
      .sort(byCodePoint)
      .map((name) => join(parent, name))
      .filter((dir) => existsSync(join(dir, "package.json")));
  });
}

/** `@pai/core` + `./testing/conformance` -> `core-testing-conformance`. */
function reportName(packageName, subpath) {
  const base = packageName.replace(/^@[^/]+\//, "");
  const rest = subpath === "." ? "" : `-${subpath.slice(2).replaceAll("/", "-")}`;
  return `${base}${rest}.api.md`;
}

/** Every `types` entry of every published package's `exports`. Packages without types (bins) have none. */
export function entryPoints() {
  const entries = [];
  for (const dir of workspaceDirs()) {
    const pkg = JSON.parse(readFileSync(join(dir, "package.json"), "utf8"));
    if (pkg.private || !pkg.exports || typeof pkg.exports !== "object") continue;
    for (const [subpath, target] of Object.entries(pkg.exports)) {
      // `types` at the top of the entry, or under `import` (the ES declarations; the `require`
      // twins are copies of them, see scripts/cjs-types.mjs).
      const types =
        typeof target === "object" && target !== null ? (target.types ?? target.import?.types) : undefined;
      if (typeof types !== "string") continue;
      entries.push({
        packageName: pkg.name,
        packageDir: dir,
        specifier: subpath === "." ? pkg.name : `${pkg.name}/${subpath.slice(2)}`,
        typesFile: join(dir, types),
        fileName: reportName(pkg.name, subpath),
      });
    }
  }
  return entries.sort((a, b) => byCodePoint(a.fileName, b.fileName));
}

const printer = ts.createPrinter({ removeComments: true, newLine: ts.NewLineKind.LineFeed });

const KINDS = new Map([
  [ts.SyntaxKind.FunctionDeclaration, "function"],
  [ts.SyntaxKind.ClassDeclaration, "class"],
  [ts.SyntaxKind.InterfaceDeclaration, "interface"],
  [ts.SyntaxKind.TypeAliasDeclaration, "type"],
  [ts.SyntaxKind.EnumDeclaration, "enum"],
  [ts.SyntaxKind.ModuleDeclaration, "namespace"],
]);

function kindOf(declaration) {
  if (ts.isVariableDeclaration(declaration)) {
    const flags = declaration.parent.flags;
    return flags & ts.NodeFlags.Const ? "const" : flags & ts.NodeFlags.Let ? "let" : "var";
  }
  return KINDS.get(declaration.kind) ?? ts.SyntaxKind[declaration.kind];
}

/** The declaration as printed, without `export`/`declare`, which depend on how the bundler laid it out. */
function printDeclaration(declaration) {
  const node =
    ts.isVariableDeclaration(declaration) && declaration.parent.declarations.length === 1
      ? declaration.parent.parent
      : declaration;
  const text = printer.printNode(ts.EmitHint.Unspecified, node, declaration.getSourceFile());
  return text.replace(/^(?:export |default |declare )+/, "");
}

/** The name of the package whose directory holds `file`. */
function owningPackage(file, cache) {
  for (let dir = dirname(file); dir !== dirname(dir); dir = dirname(dir)) {
    if (cache.has(dir)) return cache.get(dir);
    const manifest = join(dir, "package.json");
    if (existsSync(manifest)) {
      const name = JSON.parse(readFileSync(manifest, "utf8")).name ?? null;
      cache.set(dir, name);
      return name;
    }
  }
  return null;
}

const resolveAlias = (checker, symbol) =>
  symbol.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(symbol) : symbol;

/** Top-level declarations only: members, parameters and type parameters are part of their owner. */
const isTopLevel = (declaration) =>
  declaration.parent !== undefined &&
  (ts.isSourceFile(declaration.parent) ||
    ts.isModuleBlock(declaration.parent) ||
    (ts.isVariableDeclaration(declaration) && ts.isSourceFile(declaration.parent.parent.parent)));

/** The same-package, top-level symbols the declarations refer to. */
function referencedSymbols(checker, declarations, inPackage) {
  const found = new Set();
  const visit = (node) => {
    if (ts.isIdentifier(node)) {
      const symbol = checker.getSymbolAtLocation(node);
      if (symbol) {
        const target = resolveAlias(checker, symbol);
        const declarations = target.declarations ?? [];
        if (declarations.length > 0 && declarations.every(isTopLevel) && declarations.some(inPackage)) {
          found.add(target);
        }
      }
    }
    ts.forEachChild(node, visit);
  };
  for (const declaration of declarations) ts.forEachChild(declaration, visit);
  return found;
}

/** One `###` section: name, kind(s), and each declaration (in source order, files by text). */
function section(name, declarations, note) {
  const kinds = [...new Set(declarations.map(kindOf))].sort(byCodePoint).join(" + ");
  const lines = [`### \`${name}\` (${kinds})`, ""];
  if (note) return [...lines, note, ""];
  const byFile = new Map();
  for (const declaration of declarations) {
    const file = declaration.getSourceFile().fileName;
    byFile.set(file, [...(byFile.get(file) ?? []), printDeclaration(declaration)]);
  }
  const blocks = [...byFile.values()].map((texts) => texts.join("\n")).sort(byCodePoint);
  return [...lines, "```ts", ...blocks, "```", ""];
}

function renderEntry(entry, checker, program, exportedTargets, packageCache) {
  const sourceFile = program.getSourceFile(entry.typesFile);
  const moduleSymbol = sourceFile && checker.getSymbolAtLocation(sourceFile);
  const exports = moduleSymbol ? checker.getExportsOfModule(moduleSymbol) : [];
  const inPackage = (declaration) =>
    owningPackage(declaration.getSourceFile().fileName, packageCache) === entry.packageName;

  const lines = [
    `# \`${entry.specifier}\``,
    "",
    `<!-- Generated by \`npm run api:report\` from ${toPosix(relative(REPO_ROOT, entry.typesFile))}. Do not edit. -->`,
    "",
    "## Exports",
    "",
  ];
  const own = [];
  for (const symbol of [...exports].sort((a, b) => byCodePoint(a.getName(), b.getName()))) {
    const target = resolveAlias(checker, symbol);
    const declarations = target.declarations ?? [];
    const from =
      declarations.length > 0 && !declarations.some(inPackage)
        ? owningPackage(declarations[0].getSourceFile().fileName, packageCache)
        : null;
    lines.push(...section(symbol.getName(), declarations, from ? `Re-exported from \`${from}\`.` : null));
    if (!from) own.push(target);
  }

  // Walk what the exports refer to, transitively, and keep what no entry of the package exports.
  const unexported = new Map();
  const queue = [...own];
  while (queue.length > 0) {
    const symbol = queue.pop();
    const declarations = (symbol.declarations ?? []).filter(inPackage);
    for (const referenced of referencedSymbols(checker, declarations, inPackage)) {
      if (exportedTargets.has(referenced) || unexported.has(referenced)) continue;
      unexported.set(referenced, referenced.getName());
      queue.push(referenced);
    }
  }
  if (unexported.size > 0) {
    lines.push("## Referenced but not exported", "");
    const sorted = [...unexported].map(([symbol, name]) => ({
      name,
      body: section(name, (symbol.declarations ?? []).filter(inPackage), null),
    }));
    sorted.sort((a, b) => byCodePoint(a.name, b.name) || byCodePoint(a.body.join("\n"), b.body.join("\n")));
    for (const { body } of sorted) lines.push(...body);
  }
  return `${lines.join("\n").trimEnd()}\n`;
}

/** Every report, by file name. Throws when a package has not been built. */
export function generateApiReports() {
  const entries = entryPoints();
  const missing = entries.filter((entry) => !existsSync(entry.typesFile));
  if (missing.length > 0) {
    throw new Error(
      `Not built: ${missing.map((entry) => toPosix(relative(REPO_ROOT, entry.typesFile))).join(", ")}. ` +
        "The API report reads the built declarations: run `npm run build` first.",
    );
  }
  for (const entry of entries) entry.typesFile = realpathSync(entry.typesFile);
  const program = ts.createProgram({
    rootNames: entries.map((entry) => entry.typesFile),
    options: {
      target: ts.ScriptTarget.ES2023,
      lib: ["lib.es2023.d.ts", "lib.dom.d.ts", "lib.dom.iterable.d.ts"],
      module: ts.ModuleKind.NodeNext,
      moduleResolution: ts.ModuleResolutionKind.NodeNext,
      types: ["node"],
      strict: true,
      skipLibCheck: true,
      noEmit: true,
    },
  });
  const checker = program.getTypeChecker();
  const packageCache = new Map();

  // What each package exports from any of its entries: a type exported elsewhere is not a leak.
  const exportedTargets = new Set();
  for (const entry of entries) {
    const sourceFile = program.getSourceFile(entry.typesFile);
    const moduleSymbol = sourceFile && checker.getSymbolAtLocation(sourceFile);
    for (const symbol of moduleSymbol ? checker.getExportsOfModule(moduleSymbol) : []) {
      exportedTargets.add(resolveAlias(checker, symbol));
    }
  }

  const reports = new Map();
  for (const entry of entries) {
    reports.set(entry.fileName, renderEntry(entry, checker, program, exportedTargets, packageCache));
  }
  return reports;
}

/** The checked-in reports, by file name. */
export async function readApiReports() {
  if (!existsSync(API_DIR)) return new Map();
  const names = (await readdir(API_DIR)).filter((name) => name.endsWith(".api.md")).sort(byCodePoint);
  return new Map(names.map((name) => [name, readFileSync(join(API_DIR, name), "utf8")]));
}

async function main() {
  const reports = generateApiReports();
  await mkdir(API_DIR, { recursive: true });
  for (const name of (await readApiReports()).keys()) {
    if (!reports.has(name)) await rm(join(API_DIR, name));
  }
  for (const [name, text] of reports) await writeFile(join(API_DIR, name), text);
  console.log(`api-report: wrote ${reports.size} reports to ${toPosix(relative(REPO_ROOT, API_DIR))}/`);
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  await main();
}
