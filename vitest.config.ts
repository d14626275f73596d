import { fileURLToPath } from "node:url";
import { defineConfig } from "vitest/config";

const src = (path: string) => fileURLToPath(new URL(path, import.meta.url));

// Tests resolve workspace packages to their sources so a change is tested without a rebuild;
// `npm test` still builds every package first so the published entries are checked by tsc and biome.
export default defineConfig({
  resolve: {
    alias: [
      { find: /^@pai\/core\/testing\/conformance$/, replacement: src("./core/src/testing/conformance.ts") },
      { find: /^@pai\/core\/testing$/, replacement: src("./core/src/testing/index.ts") },
      { find: /^@pai\/core\/protocol$/, replacement: src("./core/src/protocol.ts") },
      { find: /^@pai\/core\/internal$/, replacement: src("./core/src/internal/index.ts") },
      { find: /^@pai\/core$/, replacement: src("./core/src/index.ts") },
      { find: /^@pai\/dispatch-pgboss$/, replacement: src("./adapters/dispatch-pgboss/src/index.ts") },
      { find: /^@pai\/dispatch-bullmq$/, replacement: src("./adapters/dispatch-bullmq/src/index.ts") },
      { find: /^@pai\/storage-memory$/, replacement: src("./adapters/storage-memory/src/index.ts") },
      { find: /^@pai\/storage-kysely$/, replacement: src("./adapters/storage-kysely/src/index.ts") },
      { find: /^@pai\/files-local$/, replacement: src("./adapters/files-local/src/index.ts") },
      { find: /^@pai\/files-s3$/, replacement: src("./adapters/files-s3/src/index.ts") },
      { find: /^@pai\/transport-trpc\/client$/, replacement: src("./adapters/transport-trpc/src/client.ts") },
      { find: /^@pai\/ai-sdk\/server$/, replacement: src("./adapters/ai-sdk/src/server.ts") },
      { find: /^@pai\/ai-sdk$/, replacement: src("./adapters/ai-sdk/src/index.ts") },
      { find: /^@pai\/transport-trpc$/, replacement: src("./adapters/transport-trpc/src/index.ts") },
      { find: /^@pai\/sandbox$/, replacement: src("./plugins/sandbox/src/index.ts") },
      { find: /^@pai\/code-mode$/, replacement: src("./plugins/code-mode/src/index.ts") },
      { find: /^@pai\/otel$/, replacement: src("./plugins/otel/src/index.ts") },
      { find: /^@pai\/client$/, replacement: src("./client/src/index.ts") },
      { find: /^@pai\/react$/, replacement: src("./react/src/index.ts") },
    ],
  },
  test: {
    include: ["**/src/**/*.test.ts", "**/test/**/*.test.ts", "react/test/**/*.test.tsx"],
    exclude: ["**/node_modules/**", "**/dist/**"],
    typecheck: {
      enabled: true,
      include: ["**/*.test-d.ts", "react/test/**/*.test-d.tsx"],
      tsconfig: "./tsconfig.json",
    },
    testTimeout: 120_000,
    hookTimeout: 60_000,
  },
});
