import { runStorageConformance } from "@pai/core/testing/conformance";
import { describe, it } from "vitest";
import { kyselyStorage, migrateToLatest } from "../../src/index.js";
import { type EngineName, openEngine } from "./engines.js";

/** Runs the core storage conformance suite on one engine, in tables of its own prefix. */
export async function runKyselyConformance(name: EngineName): Promise<void> {
  const engine = await openEngine(name, `conf_${name}`);
  if ("skip" in engine) {
    describe.skip(`storage conformance: ${name}`, () => {
      it(`skipped: ${engine.skip}`, () => {});
    });
    return;
  }
  runStorageConformance({
    name,
    create: async () => {
      await migrateToLatest(engine.db, { tablePrefix: engine.prefix });
      return kyselyStorage({ db: engine.db, tablePrefix: engine.prefix });
    },
    dispose: () => engine.dispose(),
  });
}
