import { type ChildProcess, spawn } from "node:child_process";
import { cp, mkdir, mkdtemp, readdir, readFile, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  childEnv,
  NPM_INSTALL_FLAGS,
  type PackResult,
  packWorkspaces,
  run,
  tail,
} from "../../packed/pack.mjs";
import { pickVersion, repoVersion } from "../../packed/versions.mjs";

/**
 * The published shape of PAI, installed the way a user installs it: every workspace package is
 * built and packed (`scripts/packed/pack.mjs`), and a host app in a fresh folder outside the repo
 * depends on the tarballs plus the OLDEST `ai` and `@trpc/*` the packages' declared ranges allow.
 * The host embeds PAI in its own tRPC app (host/src: its own initTRPC, auth middleware, SQLite
 * through node:sqlite, a scripted model from `@pai/core/testing`); it must install one copy of each
 * shared package, type-check under strict NodeNext settings (and PAI's own declaration files with
 * skipLibCheck off), and run: a client creates a thread over HTTP, sends a message, sees the
 * approval pending, approves it and sees the run complete.
 *
 * Needs the npm registry. Slow (build, install): run it with `npm run test:packed`. The build
 * runs when a dist is older than its sources (PAI_PACKED_BUILD_FRESH=1 skips it, =0 forces it);
 * PAI_PACKED_KEEP=1 keeps the temp folder;
 * PAI_PACKED_AI=<version> and PAI_PACKED_TRPC=<version> install those instead of the oldest
 * allowed (to find the real lower bound of a range).
 */

const HOST_SOURCES = fileURLToPath(new URL("./host/src", import.meta.url));
/** A CommonJS host in a folder of the same install (`cjs-host/src/host.ts`). */
const CJS_HOST_SOURCES = fileURLToPath(new URL("./cjs-host/src", import.meta.url));
/** The @pai packages the host imports; their @pai dependencies are added from the manifests. */
const HOST_PAI_PACKAGES = ["@pai/core", "@pai/storage-kysely", "@pai/transport-trpc", "@pai/client"];
/** Packages that must exist once in the host: a second copy splits types and `instanceof`. */
const SINGLETONS = [
  "ai",
  "@ai-sdk/provider",
  "@trpc/server",
  "@trpc/client",
  "zod",
  "kysely",
  "@pai/core",
  "@pai/client",
];

const log = (line: string) => console.log(`[packed smoke] ${line}`);

let work = "";
let host = "";
let packed: PackResult;
const timings: Record<string, number> = {};
let chosen: Record<string, string> = {};
let server: ChildProcess | null = null;

async function timed<T>(label: string, work: () => Promise<T>): Promise<T> {
  const started = performance.now();
  try {
    return await work();
  } finally {
    timings[label] = Math.round(performance.now() - started);
    log(`${label}: ${(timings[label] / 1000).toFixed(1)} s`);
  }
}

async function exists(path: string): Promise<boolean> {
  return stat(path).then(
    () => true,
    () => false,
  );
}

async function installedVersion(name: string): Promise<string> {
  return JSON.parse(await readFile(join(host, "node_modules", name, "package.json"), "utf8")).version;
}

/** Every installed copy of `name` in the host, as `path@version`. */
async function copiesOf(name: string): Promise<string[]> {
  const found: string[] = [];
  const walk = async (modules: string): Promise<void> => {
    const manifest = join(modules, name, "package.json");
    if (await exists(manifest)) {
      const { version } = JSON.parse(await readFile(manifest, "utf8"));
      found.push(`${relative(host, dirname(manifest))}@${version}`);
    }
    const entries = await readdir(modules, { withFileTypes: true }).catch(() => []);
    for (const entry of entries) {
      if (!entry.isDirectory() || entry.name.startsWith(".")) continue;
      if (!entry.name.startsWith("@")) {
        await walk(join(modules, entry.name, "node_modules"));
        continue;
      }
      for (const scoped of await readdir(join(modules, entry.name), { withFileTypes: true })) {
        if (scoped.isDirectory()) await walk(join(modules, entry.name, scoped.name, "node_modules"));
      }
    }
  };
  await walk(join(host, "node_modules"));
  return found;
}

/** The @pai packages `roots` need, following dependencies and non-optional peers. */
function paiClosure(roots: string[]): string[] {
  const manifests = new Map(packed.packages.map((pkg) => [pkg.name, pkg.manifest]));
  const seen = new Set<string>();
  const visit = (name: string) => {
    if (seen.has(name)) return;
    const manifest = manifests.get(name);
    if (!manifest) throw new Error(`${name} is not a packed workspace package`);
    seen.add(name);
    const optional = manifest.peerDependenciesMeta ?? {};
    const peers = Object.keys(manifest.peerDependencies ?? {}).filter((peer) => !optional[peer]?.optional);
    for (const dep of [...Object.keys(manifest.dependencies ?? {}), ...peers]) {
      if (dep.startsWith("@pai/")) visit(dep);
    }
  };
  for (const root of roots) visit(root);
  return [...seen];
}

/** Starts the compiled host server and resolves its URL once it listens. */
function startServer(): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ["dist/server.js"], {
      cwd: host,
      env: childEnv({ HOST_DB_PATH: join(host, "host.db") }),
      stdio: ["ignore", "pipe", "pipe"],
    });
    server = child;
    let output = "";
    const timer = setTimeout(() => reject(new Error(`The host did not start:\n${output}`)), 60_000);
    child.stdout?.setEncoding("utf8").on("data", (chunk: string) => {
      output += chunk;
      const line = output.split("\n").find((item) => item.startsWith('{"listening"'));
      if (line) {
        clearTimeout(timer);
        resolve(JSON.parse(line).listening);
      }
    });
    child.stderr?.setEncoding("utf8").on("data", (chunk: string) => {
      output += chunk;
      process.stderr.write(`[host server] ${chunk}`);
    });
    child.on("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`The host exited (${code}) before listening:\n${output}`));
    });
  });
}

async function stopServer(): Promise<void> {
  const child = server;
  server = null;
  if (!child || child.exitCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  child.kill("SIGTERM");
  const timer = setTimeout(() => child.kill("SIGKILL"), 5_000);
  await exited;
  clearTimeout(timer);
}

describe("packed tarballs in a host app", () => {
  beforeAll(async () => {
    work = await mkdtemp(join(tmpdir(), "pai-packed-smoke-"));
    host = join(work, "host");
    log(`work folder: ${work}`);
    packed = await timed("build + pack", () =>
      packWorkspaces({ destination: join(work, "tarballs"), log: (line) => log(line) }),
    );

    const paiPackages = paiClosure(HOST_PAI_PACKAGES);
    const manifests = packed.packages
      .filter((pkg) => paiPackages.includes(pkg.name))
      .map((pkg) => pkg.manifest);
    const [trpc, ai, zod, kysely] = await timed("resolve versions", () =>
      Promise.all([
        pickVersion({ names: ["@trpc/server", "@trpc/client"], manifests, prefer: "oldest" }),
        pickVersion({ names: ["ai"], manifests, prefer: "oldest" }),
        pickVersion({ names: ["zod"], manifests, prefer: "newest" }),
        pickVersion({ names: ["kysely"], manifests, prefer: "newest" }),
      ]),
    );
    for (const [name, pick] of Object.entries({ "@trpc/*": trpc, ai, zod, kysely })) {
      const ranges = pick.ranges.map((item) => `${item.from} ${item.field} ${item.range}`).join("; ");
      log(`${name}: ${pick.version} (repo ${pick.repoVersion}; declared: ${ranges || "none"})`);
    }
    const trpcVersion = process.env.PAI_PACKED_TRPC || trpc.version;
    const aiVersion = process.env.PAI_PACKED_AI || ai.version;
    if (trpcVersion !== trpc.version || aiVersion !== ai.version) {
      log(`overridden by PAI_PACKED_TRPC/PAI_PACKED_AI: @trpc/* ${trpcVersion}, ai ${aiVersion}`);
    }
    chosen = {
      "@trpc/server": trpcVersion,
      "@trpc/client": trpcVersion,
      ai: aiVersion,
      zod: zod.version,
      kysely: kysely.version,
      superjson: (await repoVersion("superjson")) ?? "^2.2.6",
    };

    await mkdir(host, { recursive: true });
    await cp(HOST_SOURCES, join(host, "src"), { recursive: true });
    const dependencies: Record<string, string> = {
      ...chosen,
      // Type tests of the router through React Query (src/react-query-types.ts); its tRPC
      // adapter pins the tRPC version exactly, so it follows the chosen one.
      "@trpc/tanstack-react-query": trpcVersion,
      "@tanstack/react-query": "^5.80.3",
      react: "^19.0.0",
      "@types/react": "^19.0.0",
    };
    for (const name of paiPackages) dependencies[name] = `file:${packed.tarballs[name]}`;
    await writeFile(
      join(host, "package.json"),
      `${JSON.stringify(
        {
          name: "pai-packed-smoke-host",
          private: true,
          type: "module",
          dependencies,
          devDependencies: {
            typescript: "6.0.3",
            "@types/node": (await repoVersion("@types/node")) ?? "^22",
          },
        },
        null,
        2,
      )}\n`,
    );
    await writeFile(
      join(host, "tsconfig.json"),
      `${JSON.stringify(
        {
          compilerOptions: {
            target: "ES2023",
            lib: ["ES2023"],
            module: "NodeNext",
            moduleResolution: "NodeNext",
            types: ["node"],
            strict: true,
            noUncheckedIndexedAccess: true,
            exactOptionalPropertyTypes: true,
            noImplicitOverride: true,
            noImplicitReturns: true,
            noFallthroughCasesInSwitch: true,
            verbatimModuleSyntax: true,
            isolatedModules: true,
            // As most hosts do; the declaration-file test turns it off and reads PAI's own errors.
            skipLibCheck: true,
            rootDir: "src",
            outDir: "dist",
          },
          include: ["src"],
        },
        null,
        2,
      )}\n`,
    );
    // The CommonJS host shares the install: its folder's package.json makes its files CommonJS.
    await cp(CJS_HOST_SOURCES, join(host, "cjs", "src"), { recursive: true });
    await writeFile(
      join(host, "cjs", "package.json"),
      `${JSON.stringify({ name: "pai-packed-cjs-host", private: true, type: "commonjs" }, null, 2)}\n`,
    );
    await writeFile(
      join(host, "cjs", "tsconfig.json"),
      // The ES host's strict settings; `verbatimModuleSyntax` would refuse `import` in a
      // CommonJS file, and paths are the folder's own.
      `${JSON.stringify(
        {
          extends: "../tsconfig.json",
          compilerOptions: { verbatimModuleSyntax: false, rootDir: "src", outDir: "dist" },
          include: ["src"],
        },
        null,
        2,
      )}\n`,
    );
    await timed("npm install", () =>
      run("npm", ["install", ...NPM_INSTALL_FLAGS], {
        cwd: host,
        timeoutMs: 10 * 60_000,
      }),
    );
  }, 25 * 60_000);

  afterAll(async () => {
    await stopServer();
    log(`timings (ms): ${JSON.stringify(timings)}`);
    if (work && process.env.PAI_PACKED_KEEP !== "1") await rm(work, { recursive: true, force: true });
  }, 60_000);

  it("packs every publishable package with all its entry points", () => {
    expect(Object.keys(packed.tarballs).sort()).toEqual(packed.packages.map((pkg) => pkg.name).sort());
    expect(packed.problems).toEqual([]);
  });

  it("installs the chosen ai and @trpc versions, one copy of each shared package", async () => {
    const installed: Record<string, string> = {};
    for (const name of Object.keys(chosen)) installed[name] = await installedVersion(name);
    log(`installed: ai ${installed.ai}, @trpc/server ${installed["@trpc/server"]}`);
    log(`installed (all): ${JSON.stringify(installed)}`);
    expect(installed).toEqual(chosen);
    const duplicated: Record<string, string[]> = {};
    for (const name of SINGLETONS) {
      const copies = await copiesOf(name);
      if (copies.length > 1) duplicated[name] = copies;
    }
    expect(duplicated).toEqual({});
  });

  it(
    "type-checks the host server and client (strict, NodeNext)",
    async () => {
      const result = await timed("tsc --noEmit", () =>
        run(process.execPath, ["node_modules/typescript/bin/tsc", "--noEmit", "-p", "tsconfig.json"], {
          cwd: host,
          allowFailure: true,
          timeoutMs: 5 * 60_000,
        }),
      );
      expect(result.code, tail(result.stdout + result.stderr, 80)).toBe(0);
    },
    5 * 60_000,
  );

  it(
    "ships declaration files without errors of their own (skipLibCheck off, no DOM lib)",
    async () => {
      const result = await timed("tsc --noEmit --skipLibCheck false", () =>
        run(
          process.execPath,
          ["node_modules/typescript/bin/tsc", "--noEmit", "-p", "tsconfig.json", "--skipLibCheck", "false"],
          { cwd: host, allowFailure: true, timeoutMs: 5 * 60_000 },
        ),
      );
      // Only errors located in PAI's .d.ts files count; third-party libraries have their own
      // (e.g. `ai` names DOM types), which hosts hide with skipLibCheck.
      const errors = result.stdout.split("\n").filter((line) => /^\S.*\(\d+,\d+\): error TS/.test(line));
      const ours = errors.filter((line) => line.startsWith("node_modules/@pai/"));
      log(
        `declaration check: ${ours.length} errors in @pai packages, ${errors.length - ours.length} elsewhere`,
      );
      expect(ours).toEqual([]);
    },
    5 * 60_000,
  );

  it(
    "runs the host over HTTP: create, send, approval pending, approve, run completed",
    async () => {
      // Emitted even when the type check fails, so this test reports the run-time behaviour alone.
      await timed("tsc (emit)", () =>
        run(process.execPath, ["node_modules/typescript/bin/tsc", "-p", "tsconfig.json"], {
          cwd: host,
          allowFailure: true,
          timeoutMs: 5 * 60_000,
        }),
      );
      expect(await exists(join(host, "dist", "server.js"))).toBe(true);
      const url = await timed("server start", () => startServer());
      log(`host listening at ${url}`);
      const flow = await timed("client flow", () =>
        run(process.execPath, ["dist/client.js", url], { cwd: host, timeoutMs: 2 * 60_000 }),
      );
      const steps = new Map<string, Record<string, unknown>>();
      for (const line of flow.stdout.split("\n").filter((item) => item.startsWith("{"))) {
        const parsed = JSON.parse(line) as { step: string } & Record<string, unknown>;
        steps.set(parsed.step, parsed);
        log(`client: ${line}`);
      }
      expect(steps.get("host")).toMatchObject({ health: true, userId: "ana", orgId: "acme" });
      // UNAUTHORIZED from the host's middleware reaches the PAI client as FORBIDDEN.
      expect(steps.get("anonymous")).toMatchObject({ refused: "FORBIDDEN" });
      expect(steps.get("created")?.threadId).toEqual(expect.any(String));
      expect(steps.get("sent")?.runId).toEqual(expect.any(String));
      expect(steps.get("pending")).toMatchObject({
        name: "requestApproval.approval",
        prompt: "Send the Q3 report to the board",
        runStatus: "waiting",
        threadStatus: "waiting",
      });
      expect(steps.get("completed")).toMatchObject({
        runStatus: "completed",
        pending: 0,
        toolState: "output-available",
        toolOutput: { approved: true },
        text: expect.stringContaining("Approved: the Q3 report went out."),
      });
      await stopServer();
    },
    5 * 60_000,
  );

  it(
    "serves a CommonJS host: its tRPC procedure types PAI's router, and Node 22 loads PAI with require",
    async () => {
      const cjs = join(host, "cjs");
      const checked = await timed("tsc (CommonJS host)", () =>
        run(process.execPath, ["../node_modules/typescript/bin/tsc", "-p", "tsconfig.json"], {
          cwd: cjs,
          allowFailure: true,
          timeoutMs: 5 * 60_000,
        }),
      );
      expect(checked.code, tail(checked.stdout + checked.stderr, 40)).toBe(0);
      const emitted = await readFile(join(cjs, "dist", "host.js"), "utf8");
      expect(emitted).toContain('require("@pai/core")');
      const ran = await timed("CommonJS host run", () =>
        run(process.execPath, ["dist/host.js"], { cwd: cjs, timeoutMs: 2 * 60_000 }),
      );
      const line = ran.stdout.split("\n").find((item) => item.startsWith("{"));
      log(`CommonJS host: ${line}`);
      expect(JSON.parse(line ?? "{}")).toEqual({
        moduleKind: "commonjs",
        pending: "requestApproval.approval",
        runStatus: "completed",
        pendingAfter: 0,
        missing: "NOT_FOUND",
        client: "function",
      });
    },
    5 * 60_000,
  );
});
