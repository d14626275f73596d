// The versions a new app depends on. The @pai packages come from --pai-version (default: this
// package's own version range; the packages are released together) or --from-tarballs.

/** The @pai packages a new app imports. Their own @pai dependencies come along. */
export const PAI_PACKAGES = [
  "@pai/core",
  "@pai/storage-kysely",
  "@pai/transport-trpc",
  "@pai/client",
  "@pai/react",
];

/** Every other dependency, by name. Known-good versions; `npm update` moves within the ranges. */
export const VERSIONS = {
  "@ai-sdk/openai": "^4.0.118",
  "@trpc/client": "^11.25.2",
  "@trpc/server": "^11.25.2",
  ai: "^7.0.173",
  kysely: "^0.29.9",
  react: "^19.3.1",
  "react-dom": "^19.3.1",
  superjson: "^2.2.6",
  zod: "^4.6.7",
  // --postgres
  pg: "^8.23.1",
  "@types/pg": "^8.23.1",
  "@electric-sql/pglite": "^0.5.16",
  // Development
  "@types/node": "^22.20.7",
  "@types/react": "^19.3.3",
  "@types/react-dom": "^19.3.0",
  "@vitejs/plugin-react": "^6.3.0",
  typescript: "^6.0.3",
  vite: "^8.3.8",
  vitest: "^4.1.12",
};

const pick = (names) => Object.fromEntries(names.map((name) => [name, VERSIONS[name]]));

/** The dependencies and devDependencies of an app (without the @pai packages). */
export function appDependencies(database) {
  const postgres = database === "postgres";
  return {
    dependencies: pick([
      "@ai-sdk/openai",
      "@trpc/client",
      "@trpc/server",
      "ai",
      "kysely",
      ...(postgres ? ["pg"] : []),
      "react",
      "react-dom",
      "superjson",
      "zod",
    ]),
    devDependencies: pick([
      ...(postgres ? ["@electric-sql/pglite"] : []),
      "@types/node",
      ...(postgres ? ["@types/pg"] : []),
      "@types/react",
      "@types/react-dom",
      "@vitejs/plugin-react",
      "typescript",
      "vite",
      "vitest",
    ]),
  };
}
