// Builds the playground from the workspace sources: the server with esbuild (dist/server/main.mjs)
// and the web UI with Vite (dist/web). `@pai/*` imports resolve to the packages' `src`, so a fresh
// clone needs no package build first, and every other dependency stays an ordinary import.

import { readFile, rm } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import { build as esbuild } from "esbuild";
import { build as viteBuild } from "vite";

const at = (path) => fileURLToPath(new URL(path, import.meta.url));
const repo = (path) => at(`../../${path}`);

/**
 * Workspace package entry points, read from the root tsconfig `paths` (the same map the type
 * checker and vitest use), so a new `@pai/*` package or subpath needs no change here.
 */
async function readPaiSources() {
  const tsconfig = JSON.parse(await readFile(repo("tsconfig.json"), "utf8"));
  const sources = {};
  for (const [name, [target]] of Object.entries(tsconfig.compilerOptions.paths ?? {})) {
    if (name.startsWith("@pai/")) sources[name] = repo(target);
  }
  return sources;
}

export const PAI_SOURCES = await readPaiSources();

/** esbuild: `@pai/*` from source, every other bare import left to Node at run time. */
const workspaceSources = {
  name: "pai-workspace-sources",
  setup(build) {
    build.onResolve({ filter: /^[^./]/ }, (args) => {
      if (args.path in PAI_SOURCES) return { path: PAI_SOURCES[args.path] };
      if (args.path.startsWith("@pai/")) {
        return { errors: [{ text: `${args.path} has no entry in the root tsconfig.json paths` }] };
      }
      return { path: args.path, external: true };
    });
  },
};

export async function buildServer() {
  await esbuild({
    entryPoints: [at("../server/main.ts")],
    outfile: at("../dist/server/main.mjs"),
    bundle: true,
    platform: "node",
    format: "esm",
    target: "node22",
    sourcemap: true,
    logLevel: "warning",
    // The workspace tsconfig only matters to the type checker; keep the bundle independent of it.
    tsconfigRaw: {},
    plugins: [workspaceSources],
  });
}

export async function buildWeb() {
  await viteBuild({
    configFile: false,
    root: at("../web"),
    base: "/",
    logLevel: "warn",
    resolve: {
      alias: Object.entries(PAI_SOURCES).map(([name, path]) => ({
        find: new RegExp(`^${name.replace("/", "\\/")}$`),
        replacement: path,
      })),
    },
    oxc: { jsx: { runtime: "automatic" } },
    build: {
      outDir: at("../dist/web"),
      emptyOutDir: true,
      sourcemap: true,
      chunkSizeWarningLimit: 2_000,
    },
  });
}

export async function buildPlayground() {
  const started = performance.now();
  await rm(at("../dist"), { recursive: true, force: true });
  await Promise.all([buildServer(), buildWeb()]);
  return Math.round(performance.now() - started);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const ms = await buildPlayground();
  console.log(`playground built in ${(ms / 1000).toFixed(1)}s`);
}
