/**
 * Kept only because adapters/transport-trpc/test/runtime-flow.test.ts imports it: the real
 * `defineTool` / `defineAgent` live in `@pai/core` now. Import from there and delete this file.
 */
export { defineAgent, defineTool } from "@pai/core";
