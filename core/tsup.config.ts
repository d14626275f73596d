import { defineConfig } from "tsup";

export default defineConfig({
  entry: {
    index: "src/index.ts",
    protocol: "src/protocol.ts",
    "testing/index": "src/testing/index.ts",
    "testing/conformance": "src/testing/conformance.ts",
    "internal/index": "src/internal/index.ts",
    cli: "src/cli/pai-cli.ts",
  },
  format: ["esm"],
  dts: true,
  clean: true,
  sourcemap: true,
  target: "node22",
});
