import { spawn } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { builtinModules } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import ts from "typescript";
import { describe, expect, it } from "vitest";

// `@pai/core/testing` is imported by apps (a scripted model in a demo, `createTestRuntime` under
// any test runner), so nothing it loads may need vitest; the vitest-based conformance suites
// live in `@pai/core/testing/conformance`. Checked twice: statically on the source graph (every
// run), and by loading the built entry in a Node process where vitest cannot be resolved.

const coreDir = fileURLToPath(new URL("../..", import.meta.url));
const repoRoot = join(coreDir, "..");
const corePackage = JSON.parse(readFileSync(join(coreDir, "package.json"), "utf8")) as {
  dependencies?: Record<string, string>;
  peerDependencies?: Record<string, string>;
  peerDependenciesMeta?: Record<string, { optional?: boolean }>;
};

const isVitest = (specifier: string) =>
  specifier === "vitest" || specifier.startsWith("vitest/") || specifier.startsWith("@vitest/");

/** `zod/v4` -> `zod`, `@ai-sdk/provider` stays. */
const packageName = (specifier: string) =>
  specifier.startsWith("@") ? specifier.split("/").slice(0, 2).join("/") : specifier.split("/")[0]!;

/**
 * The bare specifiers a source entry loads at run time, following its relative imports. Type-only
 * imports and exports are erased by the compiler and skipped; `import { type X }` is kept (under
 * `verbatimModuleSyntax` it still loads the module), and so are literal dynamic imports.
 */
function runtimeImports(entry: string): Set<string> {
  const seen = new Set<string>();
  const bare = new Set<string>();
  const visit = (file: string) => {
    if (seen.has(file)) return;
    seen.add(file);
    const source = ts.createSourceFile(file, readFileSync(file, "utf8"), ts.ScriptTarget.Latest, true);
    const found: string[] = [];
    const walk = (node: ts.Node) => {
      if (ts.isImportDeclaration(node) && ts.isStringLiteral(node.moduleSpecifier)) {
        if (!node.importClause?.isTypeOnly) found.push(node.moduleSpecifier.text);
      } else if (
        ts.isExportDeclaration(node) &&
        node.moduleSpecifier &&
        ts.isStringLiteral(node.moduleSpecifier)
      ) {
        if (!node.isTypeOnly) found.push(node.moduleSpecifier.text);
      } else if (
        ts.isCallExpression(node) &&
        node.expression.kind === ts.SyntaxKind.ImportKeyword &&
        node.arguments[0] &&
        ts.isStringLiteral(node.arguments[0])
      ) {
        found.push(node.arguments[0].text);
      }
      ts.forEachChild(node, walk);
    };
    walk(source);
    for (const specifier of found) {
      if (specifier.startsWith(".")) {
        const resolved = join(file, "..", specifier.replace(/\.js$/, ".ts"));
        if (!existsSync(resolved)) throw new Error(`${file}: cannot resolve ${specifier}`);
        visit(resolved);
      } else {
        bare.add(specifier);
      }
    }
  };
  visit(entry);
  return bare;
}

describe("@pai/core/testing source graph", () => {
  it("loads no vitest, only packages @pai/core declares as dependencies or required peers", () => {
    const imports = [...runtimeImports(join(coreDir, "src/testing/index.ts"))];
    expect(imports.filter(isVitest)).toEqual([]);
    const declared = new Set([
      ...Object.keys(corePackage.dependencies ?? {}),
      ...Object.keys(corePackage.peerDependencies ?? {}).filter(
        (name) => !corePackage.peerDependenciesMeta?.[name]?.optional,
      ),
    ]);
    const builtins = new Set(builtinModules);
    const undeclared = imports.filter(
      (specifier) =>
        !specifier.startsWith("node:") && !builtins.has(specifier) && !declared.has(packageName(specifier)),
    );
    expect(undeclared).toEqual([]);
  });

  it("keeps the vitest suites in @pai/core/testing/conformance (the walk does see vitest there)", () => {
    expect([...runtimeImports(join(coreDir, "src/testing/conformance.ts"))].filter(isVitest)).toEqual([
      "vitest",
    ]);
  });

  it("declares vitest as an optional peer, and no peer on @pai/storage-memory", () => {
    expect(corePackage.peerDependencies?.vitest).toBeDefined();
    expect(corePackage.peerDependenciesMeta?.vitest?.optional).toBe(true);
    expect(corePackage.peerDependencies?.["@pai/storage-memory"]).toBeUndefined();
    expect(corePackage.dependencies?.vitest).toBeUndefined();
  });
});

// The built entries. `npm test` builds first; a checkout that has not built this layout yet
// (no dist/testing/conformance.js) skips instead of judging a stale dist.
const distTesting = join(coreDir, "dist/testing/index.js");
const distConformance = join(coreDir, "dist/testing/conformance.js");
const distIndex = join(coreDir, "dist/index.js");
const distMemory = join(repoRoot, "adapters/storage-memory/dist/index.js");
const built = [distTesting, distConformance, distIndex, distMemory].every((file) => existsSync(file));

/** A module-resolution hook that makes `vitest` unresolvable, as in an app without it. */
const HIDE_VITEST = `
import * as module from "node:module";
const hidden = (s) => s === "vitest" || s.startsWith("vitest/") || s.startsWith("@vitest/");
function resolve(specifier, context, next) {
  if (hidden(specifier)) {
    const error = new Error("Cannot find package '" + specifier + "' (vitest is not installed here)");
    error.code = "ERR_MODULE_NOT_FOUND";
    throw error;
  }
  return next(specifier, context);
}
if (module.registerHooks) {
  module.registerHooks({ resolve });
} else {
  // Node < 22.15: the same hook through the asynchronous loader API.
  const source = "const hidden = " + hidden + "; export " + resolve;
  module.register("data:text/javascript," + encodeURIComponent(source));
}
`;

const SCRIPT = `
const [testingUrl, conformanceUrl, coreUrl, memoryUrl] = process.argv.slice(-4);
const { scriptedModel, createTestRuntime, makeThreadRow, runTool } = await import(testingUrl);
const { defineAgent } = await import(coreUrl);
const { memoryStorage } = await import(memoryUrl);
if (typeof scriptedModel !== "function" || typeof runTool !== "function" || typeof makeThreadRow !== "function") {
  throw new Error("missing exports");
}
const runtime = await createTestRuntime({
  agent: defineAgent({ name: "a" }),
  model: [{ text: "hello without vitest" }],
  storage: memoryStorage(),
});
const threadId = await runtime.createThread();
await runtime.send(threadId, "hi");
const text = await runtime.lastText(threadId);
await runtime.close();
let conformance;
try {
  await import(conformanceUrl);
  conformance = "loaded";
} catch (error) {
  conformance = String(error?.message ?? error);
}
process.stdout.write(JSON.stringify({ text, conformance }));
`;

function runNode(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const env = { ...process.env };
  delete env.NODE_OPTIONS;
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, args, { cwd: repoRoot, env, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.setEncoding("utf8").on("data", (chunk) => {
      stdout += chunk;
    });
    child.stderr.setEncoding("utf8").on("data", (chunk) => {
      stderr += chunk;
    });
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, stdout, stderr }));
  });
}

describe.skipIf(!built)("@pai/core/testing built entry", () => {
  it("runs a scripted thread in a Node process where vitest cannot be resolved", async () => {
    const dir = await mkdtemp(join(tmpdir(), "pai-testing-entry-"));
    try {
      const hook = join(dir, "hide-vitest.mjs");
      await writeFile(hook, HIDE_VITEST);
      const result = await runNode([
        "--import",
        pathToFileURL(hook).href,
        "--input-type=module",
        "-e",
        SCRIPT,
        pathToFileURL(distTesting).href,
        pathToFileURL(distConformance).href,
        pathToFileURL(distIndex).href,
        pathToFileURL(distMemory).href,
      ]);
      expect(result.stderr).toBe("");
      expect(result.code).toBe(0);
      const outcome = JSON.parse(result.stdout) as { text: string; conformance: string };
      expect(outcome.text).toBe("hello without vitest");
      // The control: the same process cannot load the conformance entry, so vitest really was hidden.
      expect(outcome.conformance).toContain("vitest is not installed here");
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
