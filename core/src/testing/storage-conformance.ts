// The storage conformance suite's public entry: its options and group names, and the runner that
// registers each group (one file per group under ./storage-conformance/) against one adapter.
import { afterAll, beforeAll, beforeEach, describe, it } from "vitest";
import { PaiError } from "../errors/pai-error.js";
import type { StorageV1 } from "../ports/storage.js";
import { actionsTests } from "./storage-conformance/actions.js";
import { basicsTests } from "./storage-conformance/basics.js";
import { conflictsTests } from "./storage-conformance/conflicts.js";
import { type ConformanceContext, createConformanceContext } from "./storage-conformance/context.js";
import { eventsTests } from "./storage-conformance/events.js";
import { jsonTests } from "./storage-conformance/json.js";
import { leasesTests } from "./storage-conformance/leases.js";
import { rowsTests } from "./storage-conformance/rows.js";
import { threadsTests } from "./storage-conformance/threads.js";
import { wakeTests } from "./storage-conformance/wake.js";
import { writeCostTests } from "./storage-conformance/write-cost.js";

/** The named groups of the storage conformance suite, in the order they run. */
export const STORAGE_CONFORMANCE_GROUPS = [
  "basics",
  "conflicts",
  "rows",
  "events",
  "threads",
  "actions",
  "leases",
  "wake",
  "json",
  "write-cost",
] as const;

export type StorageConformanceGroup = (typeof STORAGE_CONFORMANCE_GROUPS)[number];

/** Why a group does not run against an adapter, and where its behaviour is tested instead. */
export type StorageConformanceSkip = { reason: string; testedIn: string };

export type StorageConformanceOptions<TStorage extends StorageV1 = StorageV1> = {
  /** Names the vitest `describe` block, e.g. `"memory"` or `"postgres"`. */
  name: string;
  /** Called once before the suite; the same storage serves every test. */
  create: () => Promise<TStorage> | TStorage;
  /** Optional: empties the storage before every test (tests never depend on it: ids are unique per run). */
  reset?: (storage: TStorage) => Promise<void>;
  /** Called once after the suite. Without it the suite calls `storage.close?.()`. */
  dispose?: (storage: TStorage) => Promise<void>;
  /** Groups this adapter cannot run, each with a reason and a pointer to where it is tested instead. */
  skip?: Partial<Record<StorageConformanceGroup, StorageConformanceSkip>>;
};

// A Record over the group names makes a group added to STORAGE_CONFORMANCE_GROUPS without tests
// (or tests without a name) a type error rather than a silently missing describe block.
const groupTests: Record<StorageConformanceGroup, (context: ConformanceContext) => void> = {
  basics: basicsTests,
  conflicts: conflictsTests,
  rows: rowsTests,
  events: eventsTests,
  threads: threadsTests,
  actions: actionsTests,
  leases: leasesTests,
  wake: wakeTests,
  json: jsonTests,
  "write-cost": writeCostTests,
};

/**
 * Registers the storage conformance suite as vitest `describe`/`it` blocks. Every storage
 * adapter runs the same suite; it only uses timestamps it passes in (never a clock) and ids
 * unique to this run, so it works against a shared, non-empty database.
 *
 * @example
 * import { runStorageConformance } from "@pai/core/testing/conformance";
 * import { memoryStorage } from "@pai/storage-memory";
 *
 * runStorageConformance({ name: "memory", create: () => memoryStorage() });
 */
export function runStorageConformance<TStorage extends StorageV1>(
  options: StorageConformanceOptions<TStorage>,
): void {
  for (const [group, entry] of Object.entries(options.skip ?? {})) {
    if (!(STORAGE_CONFORMANCE_GROUPS as readonly string[]).includes(group)) {
      throw new PaiError(
        "INVALID_DEFINITION",
        `runStorageConformance: unknown group "${group}" in skip. Use one of ${STORAGE_CONFORMANCE_GROUPS.join(", ")}.`,
      );
    }
    if (!entry?.reason?.trim() || !entry.testedIn?.trim()) {
      throw new PaiError(
        "INVALID_DEFINITION",
        `runStorageConformance: skip.${group} needs a non-empty reason and testedIn (where the behaviour is tested instead).`,
      );
    }
  }

  let current: TStorage | undefined;
  const storage = (): TStorage => {
    if (!current)
      throw new Error("runStorageConformance: the storage was not created (see the beforeAll error).");
    return current;
  };
  const context = createConformanceContext(storage);

  const group = (name: StorageConformanceGroup) => {
    const skipped = options.skip?.[name];
    if (skipped) {
      describe(name, () => {
        it.skip(`skipped: ${skipped.reason} (tested in ${skipped.testedIn})`, () => {});
      });
      return;
    }
    describe(name, () => groupTests[name](context));
  };

  describe(`storage conformance: ${options.name}`, () => {
    beforeAll(async () => {
      current = await options.create();
    });
    afterAll(async () => {
      if (!current) return;
      if (options.dispose) await options.dispose(current);
      else await current.close?.();
      current = undefined;
    });
    if (options.reset) {
      const reset = options.reset;
      beforeEach(async () => {
        await reset(storage());
      });
    }
    for (const name of STORAGE_CONFORMANCE_GROUPS) group(name);
  });
}
