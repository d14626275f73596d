import { existsSync } from "node:fs";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";
import { describe, expect, it } from "vitest";

/**
 * What a browser app ships when it uses PAI's client side: the built packages (their `dist`, as
 * npm installs them; `npm test` builds first), bundled and minified the way an app bundler does.
 * The AI SDK's server code (its gateway provider, OIDC tokens) and the scheduler's cron and date
 * libraries belong to the runtime; none of them may reach the page, whatever the entry imports.
 */
const root = fileURLToPath(new URL("../..", import.meta.url));
const SERVER_MARKERS = ["getVercelOidcToken", "ai-gateway", "CronExpression", "luxon"];

async function bundle(source: string) {
  for (const pkg of ["core", "client", "react", "adapters/transport-trpc"]) {
    if (!existsSync(join(root, pkg, "dist", "index.js"))) {
      throw new Error(`${pkg}/dist is missing: run \`npm run build\` first`);
    }
  }
  // Inside the repository, so the workspace packages resolve through node_modules to their dist.
  const dir = await mkdtemp(join(root, "react", "test", ".bundle-"));
  try {
    const entry = join(dir, "entry.ts");
    await writeFile(entry, source);
    const result = await build({
      entryPoints: [entry],
      bundle: true,
      write: false,
      minify: true,
      format: "esm",
      platform: "browser",
      // The repository's tsconfig maps @pai/* to sources; an app gets the published files.
      tsconfigRaw: {},
      external: ["react", "react-dom", "react/jsx-runtime"],
      logLevel: "silent",
    });
    return result.outputFiles[0]?.text ?? "";
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

describe("the browser bundle of PAI's client side", () => {
  it("carries no server code with @pai/client and the tRPC transport", async () => {
    const code = await bundle(
      `import { createPaiClient } from "@pai/client";
       import { createTrpcTransport } from "@pai/transport-trpc/client";
       console.log(createPaiClient, createTrpcTransport);`,
    );
    expect(SERVER_MARKERS.filter((marker) => code.includes(marker))).toEqual([]);
    expect(code.length).toBeLessThan(120_000);
  });

  it("carries no server code once @pai/react and its client tools are added", async () => {
    const code = await bundle(
      `import { createPaiClient } from "@pai/client";
       import { createPaiReact } from "@pai/react";
       import { createTrpcTransport } from "@pai/transport-trpc/client";
       console.log(createPaiClient, createPaiReact, createTrpcTransport);`,
    );
    expect(SERVER_MARKERS.filter((marker) => code.includes(marker))).toEqual([]);
    // The client tools' schema converter comes along (the AI SDK's small utilities and Zod's JSON
    // Schema output); the runtime's 400 kB do not.
    expect(code.length).toBeLessThan(200_000);
  }, 30_000);
});
