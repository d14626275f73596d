// createPgliteDialect: embedded Postgres (PGlite) through the dialect Kysely ships.
// Kysely's structural `PGlite` type, not `@electric-sql/pglite`'s (an optional peer dependency):
// a `new PGlite()` fits, and the types compile without the package installed.
import { type Dialect, type PGlite, PGliteDialect } from "kysely";

/**
 * A Kysely dialect over an `@electric-sql/pglite` instance (embedded Postgres in WASM).
 * Kysely 0.29 ships a PGlite driver that runs transactions through PGlite's exclusive
 * `transaction()`, so this only adapts the types. `db.destroy()` closes the PGlite instance.
 * Its adapter allows a single connection, which is how kyselyStorage tells PGlite from a server.
 */
export function createPgliteDialect(pglite: PGlite): Dialect {
  return new PGliteDialect({ pglite });
}
