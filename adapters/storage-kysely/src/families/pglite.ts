// The PGlite strategy: Postgres SQL in one embedded, single-connection process. Only what
// follows from "one process" differs from the Postgres strategy.
import { postgresFamily } from "./postgres.js";
import type { SqlFamily } from "./sql-family.js";

// One connection, in process: no clients whose log flushes a group commit could share.
const { groupCommits: _serverOnly, ...postgresStrategy } = postgresFamily;

export const pgliteFamily: SqlFamily = {
  ...postgresStrategy,
  engine: "pglite",
  // No other process can open the same database, so leases never contend and nobody listens.
  capabilities: { sharedAcrossProcesses: false, listenNotify: false },
  namedStatements: false,
  // A postgresNotifier talks to a Postgres server over `pg`; it can never share PGlite's database.
};
