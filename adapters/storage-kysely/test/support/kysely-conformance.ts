import { runStorageConformance } from "@pai/core/testing/conformance";
import { describe, it } from "vitest";
import { type KyselyStorageOptions, kyselyStorage, migrateToLatest } from "../../src/index.js";
import { type EngineName, openEngine } from "./engines.js";

/**
 * Runs the core storage conformance suite on one engine, in tables of its own prefix; `variant`
 * names a second run with other storage options.
 */
export async function runKyselyConformance(
  name: EngineName,
  variant?: { label: string; options: Omit<KyselyStorageOptions, "db" | "tablePrefix"> },
): Promise<void> {
  const label = variant ? `${name}, ${variant.label}` : name;
  const engine = await openEngine(name, `conf_${name}${variant ? "_v" : ""}`);
  if ("skip" in engine) {
    describe.skip(`storage conformance: ${label}`, () => {
      it(`skipped: ${engine.skip}`, () => {});
    });
    return;
  }
  runStorageConformance({
    name: label,
    create: async () => {
      await migrateToLatest(engine.db, { tablePrefix: engine.prefix });
      return kyselyStorage({ ...variant?.options, db: engine.db, tablePrefix: engine.prefix });
    },
    dispose: () => engine.dispose(),
  });
}
