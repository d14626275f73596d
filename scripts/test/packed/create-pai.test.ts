import { type ChildProcess, spawn } from "node:child_process";
import { mkdir, mkdtemp, readFile, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { stripVTControlCharacters } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  childEnv,
  NPM_INSTALL_FLAGS,
  type PackResult,
  packWorkspaces,
  type RunResult,
  run,
} from "../../packed/pack.mjs";

/**
 * `npm create pai`, end to end: the workspace is packed (scripts/packed/pack.mjs), the
 * `create-pai` bin is run from its packed tarball (`npm exec --package <tarball>`, as
 * `npm create pai` does) into an empty folder outside the repo with `--from-tarballs`, and the
 * generated app is installed, tested (`npm test`), built (`npm run build`) and started
 * (`npm start`); its page and its API answer over HTTP. The Postgres variant is installed, tested
 * on PGlite and type-checked. Every command and its key output lines are printed as a transcript.
 *
 * Needs the npm registry. Slow (build, installs): run it with `npm run test:packed`. The build
 * runs when a dist is older than its sources (PAI_PACKED_BUILD_FRESH=1 skips it, =0 forces it);
 * PAI_PACKED_KEEP=1 keeps the temp folder.
 */

const SOURCE_BIN = fileURLToPath(new URL("../../../create-pai/bin/create-pai.mjs", import.meta.url));

let work = "";
let packed: PackResult;
const transcript: string[] = [];
let server: ChildProcess | null = null;

// The app must not pick up a real model or the parent's settings.
const appEnv = (extra: Record<string, string> = {}) =>
  childEnv({ OPENAI_API_KEY: "", DATABASE_URL: "", ...extra });

const stripAnsi = (text: string) => stripVTControlCharacters(text);

function say(line: string): void {
  transcript.push(line);
  console.log(`[create-pai] ${line}`);
}

/** Runs a command, records it and the output lines matching `keep` in the transcript. */
async function step(
  shown: string,
  command: string,
  args: string[],
  options: { cwd: string; keep: RegExp; env?: Record<string, string>; allowFailure?: boolean },
): Promise<RunResult & { output: string }> {
  say(`$ ${shown}`);
  const result = await run(command, args, {
    cwd: options.cwd,
    env: options.env ?? appEnv(),
    timeoutMs: 10 * 60_000,
    allowFailure: options.allowFailure ?? false,
  });
  const output = stripAnsi(result.stdout + result.stderr);
  for (const line of output.split("\n")) {
    // npm echoes the script it runs (`> tsc --noEmit && vite build`) after its name line.
    if (options.keep.test(line) || /^> (?!\S+@\d)/.test(line)) say(`  ${line.trim()}`);
  }
  say(`  (exit ${result.code}, ${(result.ms / 1000).toFixed(1)} s)`);
  return { ...result, output };
}

async function exists(path: string): Promise<boolean> {
  return stat(path).then(
    () => true,
    () => false,
  );
}

/** `npm start` in its own process group; resolves the URL the app prints once it listens. */
function startApp(cwd: string): Promise<string> {
  say("$ PORT=0 npm start");
  return new Promise((resolve, reject) => {
    const child = spawn("npm", ["start"], {
      cwd,
      env: appEnv({ PORT: "0" }),
      detached: true,
      stdio: ["ignore", "pipe", "pipe"],
    });
    server = child;
    let output = "";
    let ready = false;
    const timer = setTimeout(() => reject(new Error(`npm start did not get ready:\n${output}`)), 3 * 60_000);
    const onData = (chunk: string) => {
      output += chunk;
      if (ready) return;
      const clean = stripAnsi(output);
      // The app prints its URL, then the model and the database: wait for the last line.
      const url = /PAI app ready: (http:\/\/\S+)/.exec(clean)?.[1];
      if (url && /database: .*\n/.test(clean)) {
        ready = true;
        clearTimeout(timer);
        for (const line of clean.split("\n")) {
          if (/built in|PAI app ready|model:|database:/.test(line)) say(`  ${line.trim()}`);
        }
        resolve(url);
      }
    };
    child.stdout?.setEncoding("utf8").on("data", onData);
    child.stderr?.setEncoding("utf8").on("data", onData);
    child.on("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`npm start exited (${code}) before the app was ready:\n${output}`));
    });
  });
}

/** Stops `npm start` and the app under it (its process group). */
async function stopApp(): Promise<void> {
  const child = server;
  server = null;
  if (!child?.pid || child.exitCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  const signal = (name: NodeJS.Signals) => {
    try {
      process.kill(-(child.pid as number), name);
    } catch {
      // Already gone.
    }
  };
  signal("SIGTERM");
  const timer = setTimeout(() => signal("SIGKILL"), 10_000);
  await exited;
  clearTimeout(timer);
  say("  (stopped with SIGTERM)");
}

/** A tRPC call the way the app's client makes it (superjson on the wire). */
async function trpc(url: string, path: string, input: unknown) {
  const response = await fetch(`${url}/api/trpc/${path}`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ json: input }),
  });
  return { status: response.status, body: (await response.json()) as { result?: { data?: { json?: any } } } };
}

/** Runs create-pai from the packed tarball, as `npm create pai` would. */
async function createApp(name: string, flags: string[]) {
  const target = join(work, name);
  await mkdir(target); // an existing, empty folder is fine
  const tarball = packed.tarballs["create-pai"];
  if (!tarball) throw new Error("create-pai was not packed: is it in the root workspaces?");
  const args = ["exec", "--yes", `--package=${tarball}`, "--", "create-pai", name, ...flags];
  const result = await step(
    `npm exec --package=<tarballs>/create-pai-*.tgz -- create-pai ${name} ${flags.join(" ")}`,
    "npm",
    args,
    {
      cwd: work,
      keep: /^Created|^\s+(package\.json|server\/db\.ts)$/,
    },
  );
  return { target, result };
}

describe("npm create pai", () => {
  beforeAll(async () => {
    work = await mkdtemp(join(tmpdir(), "pai-create-pai-"));
    say(`work folder: ${work}`);
    packed = await packWorkspaces({
      destination: join(work, "tarballs"),
      log: (line) => console.log(`[create-pai] ${line}`),
    });
    say(`packed ${Object.keys(packed.tarballs).length} tarballs into <tarballs>`);
    expect(packed.problems).toEqual([]);
  }, 25 * 60_000);

  afterAll(async () => {
    await stopApp();
    console.log(
      `\n===== create-pai transcript =====\n${transcript.join("\n")}\n=================================\n`,
    );
    if (work && process.env.PAI_PACKED_KEEP !== "1") await rm(work, { recursive: true, force: true });
  }, 60_000);

  it("refuses a folder that is not empty, and explains its options", async () => {
    const full = join(work, "not-empty");
    await mkdir(full);
    await writeFile(join(full, "notes.txt"), "keep me\n");
    const refused = await run(process.execPath, [SOURCE_BIN, full], { cwd: work, allowFailure: true });
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain("is not empty");
    expect(await readFile(join(full, "notes.txt"), "utf8")).toBe("keep me\n");
    const help = await run(process.execPath, [SOURCE_BIN, "--help"], { cwd: work });
    expect(help.stdout).toContain("--from-tarballs <dir>");
    expect(help.stdout).toContain("--postgres");
  });

  it(
    "scaffolds, installs, tests, builds and starts the SQLite app",
    async () => {
      const { target: app } = await createApp("my-app", ["--from-tarballs", join(work, "tarballs")]);
      const manifest = JSON.parse(await readFile(join(app, "package.json"), "utf8"));
      expect(manifest.name).toBe("my-app");
      expect(Object.keys(manifest.scripts)).toEqual(
        expect.arrayContaining(["dev", "start", "test", "build"]),
      );
      const pai = Object.entries(manifest.dependencies as Record<string, string>).filter(([name]) =>
        name.startsWith("@pai/"),
      );
      expect(pai.map(([name]) => name).sort()).toEqual(
        ["@pai/client", "@pai/core", "@pai/react", "@pai/storage-kysely", "@pai/transport-trpc"].sort(),
      );
      for (const [, spec] of pai) expect(spec).toMatch(/^file:\.\.\/tarballs\/pai-.*\.tgz$/);
      expect(manifest.dependencies.pg).toBeUndefined();
      for (const file of [
        ".gitignore",
        ".env.example",
        "README.md",
        "server/app.test.ts",
        "web/index.html",
      ]) {
        expect(await exists(join(app, file)), file).toBe(true);
      }
      expect(await readFile(join(app, "README.md"), "utf8")).not.toContain("<!--");

      await step("npm install", "npm", ["install", ...NPM_INSTALL_FLAGS], {
        cwd: app,
        keep: /added \d+ packages|ERR!|WARN/,
      });
      const tested = await step("npm test", "npm", ["test"], {
        cwd: app,
        keep: /✓|×|Test Files|Tests\s|FAIL/,
      });
      expect(tested.output).toMatch(/Tests\s+\d+ passed/);
      expect(tested.output).not.toMatch(/failed/);
      await step("npm run build", "npm", ["run", "build"], { cwd: app, keep: /built in|dist\/|error TS/ });

      const url = await startApp(app);
      const page = await fetch(`${url}/`);
      const html = await page.text();
      say(`  GET / -> ${page.status} ${page.headers.get("content-type")} (${html.length} bytes)`);
      expect(page.status).toBe(200);
      expect(page.headers.get("content-type")).toContain("text/html");
      expect(html).toContain('<div id="root"></div>');
      const script = /src="(\/assets\/[^"]+\.js)"/.exec(html)?.[1];
      expect(script).toBeDefined();
      const bundle = await fetch(`${url}${script}`);
      say(`  GET ${script} -> ${bundle.status} ${bundle.headers.get("content-type")}`);
      expect(bundle.status).toBe(200);
      await bundle.arrayBuffer();

      const health = await fetch(`${url}/api/health`);
      const healthBody = await health.json();
      say(`  GET /api/health -> ${health.status} ${JSON.stringify(healthBody)}`);
      expect(health.status).toBe(200);
      expect(healthBody).toEqual({ ok: true });

      const created = await trpc(url, "pai.threads.create", { agentId: "main" });
      const threadId = created.body.result?.data?.json?.threadId;
      say(`  POST /api/trpc/pai.threads.create -> ${created.status} threadId ${threadId}`);
      expect(created.status).toBe(200);
      expect(threadId).toEqual(expect.any(String));
      await stopApp();
    },
    15 * 60_000,
  );

  it(
    "scaffolds the Postgres app: tests on PGlite, type-checks, asks for DATABASE_URL",
    async () => {
      const { target: app } = await createApp("my-pg-app", [
        "--postgres",
        "--from-tarballs",
        join(work, "tarballs"),
      ]);
      const manifest = JSON.parse(await readFile(join(app, "package.json"), "utf8"));
      expect(manifest.dependencies.pg).toEqual(expect.any(String));
      expect(manifest.devDependencies["@electric-sql/pglite"]).toEqual(expect.any(String));
      expect(await readFile(join(app, "server/db.ts"), "utf8")).toContain("DATABASE_URL");
      expect(await readFile(join(app, ".env.example"), "utf8")).toContain("DATABASE_URL=postgres://");
      expect(await readFile(join(app, "README.md"), "utf8")).not.toContain("node:sqlite`, in `data/app.db`");

      await step("npm install", "npm", ["install", ...NPM_INSTALL_FLAGS], {
        cwd: app,
        keep: /added \d+ packages|ERR!|WARN/,
      });
      const tested = await step("npm test", "npm", ["test"], {
        cwd: app,
        keep: /✓|×|Test Files|Tests\s|FAIL/,
      });
      expect(tested.output).toMatch(/Tests\s+\d+ passed/);
      expect(tested.output).not.toMatch(/failed/);
      await step("npm run typecheck", "npm", ["run", "typecheck"], { cwd: app, keep: /error TS/ });
      const serve = await step("npm run serve   # no DATABASE_URL", "npm", ["run", "serve"], {
        cwd: app,
        keep: /DATABASE_URL/,
        allowFailure: true,
      });
      expect(serve.code).not.toBe(0);
      expect(serve.output).toContain("Set DATABASE_URL");
    },
    15 * 60_000,
  );
});
