import { runKyselyConformance } from "./support/kysely-conformance.js";

// One commit statement in flight at a time, so every commit the suite makes concurrently (racing
// writers, parallel threads) waits and goes out in a group statement.
await runKyselyConformance("postgres", {
  label: "every concurrent commit grouped",
  options: { groupCommits: { inFlight: 1 } },
});
