import { runKyselyConformance } from "./support/kysely-conformance.js";

await runKyselyConformance("postgres");
