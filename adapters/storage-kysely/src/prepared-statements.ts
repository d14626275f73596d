// How PAI's hot Postgres statements reach the server: as named (prepared) statements when the
// driver is `pg`, else as plain text.
import { createHash } from "node:crypto";
import { CompiledQuery, type Kysely, type QueryResult } from "kysely";

/**
 * Sends one finished statement text with its parameters. PAI's commit and thread read have a
 * handful of texts per table prefix, so a server that keeps them parsed and planned skips the
 * most expensive part of each statement after the first.
 */
export type StatementSender = <R>(text: string, parameters: readonly unknown[]) => Promise<QueryResult<R>>;

/** Plain text: the server parses and plans the statement every time. */
export const plainStatements =
  (db: Kysely<any>): StatementSender =>
  <R>(text: string, parameters: readonly unknown[]) =>
    db.executeQuery<R>(CompiledQuery.raw(text, [...parameters]));

/**
 * A statement text that also names itself. Kysely hands a compiled query's `sql` to the driver
 * as is, and `pg` takes an object in that place as a query config (`{ name, text }`): a named
 * statement is parsed once per connection and later sent as a bind of its parameters only.
 * Query loggers get this object: `String(sql)`, templates and `JSON.stringify` give the text.
 * Not a `String` object: `pg` copies a config's own properties on every query, and a string
 * object has one per character.
 */
class NamedStatement {
  constructor(
    readonly text: string,
    readonly name: string,
  ) {}
  toString(): string {
    return this.text;
  }
  toJSON(): string {
    return this.text;
  }
}

function namedQuery(text: string, parameters: readonly unknown[], name: string): CompiledQuery {
  return {
    ...CompiledQuery.raw(text, [...parameters]),
    sql: new NamedStatement(text, name) as unknown as string,
  };
}

const PROBE_TEXT = "select 1 as pai_prepared_probe";
const PROBE_NAME = "pai_prepared_probe";

/**
 * Whether the Kysely instance's driver runs a named statement. A driver that wants a string
 * fails the probe (or runs the text unprepared, which is still right); `undefined` when the
 * probe threw, which may also be a database that is not up yet.
 */
async function probeNamedStatements(db: Kysely<any>): Promise<boolean | undefined> {
  try {
    const result = await db.executeQuery<{ pai_prepared_probe?: unknown }>(
      namedQuery(PROBE_TEXT, [], PROBE_NAME),
    );
    return Number(result.rows[0]?.pai_prepared_probe) === 1;
  } catch {
    return undefined;
  }
}

/** Probes that may throw before the storage settles on plain text. */
const PROBE_ATTEMPTS = 3;

/** A statement name per text: the same text always gets the same name, in any process. */
function statementName(text: string, names: Map<string, string>): string {
  let name = names.get(text);
  if (name === undefined) {
    name = `pai_${createHash("sha1").update(text).digest("hex").slice(0, 24)}`;
    // Texts are a few dozen shapes per table prefix; a bound keeps a misuse from growing it.
    if (names.size >= 4096) names.clear();
    names.set(text, name);
  }
  return name;
}

/**
 * Named statements once a probe shows the driver takes them; plain text before that and when it
 * does not. `enabled: false` is for poolers that cannot keep prepared statements (PgBouncer in
 * transaction mode before 1.21).
 */
export function postgresStatements(db: Kysely<any>, enabled = true): StatementSender {
  const plain = plainStatements(db);
  if (!enabled) return plain;
  const names = new Map<string, string>();
  let named: boolean | undefined;
  let probes = 0;
  let probing: Promise<void> | undefined;
  return async <R>(text: string, parameters: readonly unknown[]) => {
    if (named === undefined && probing === undefined) {
      probes++;
      probing = probeNamedStatements(db).then((supported) => {
        probing = undefined;
        named = supported ?? (probes >= PROBE_ATTEMPTS ? false : undefined);
      });
    }
    if (probing) await probing;
    return named
      ? db.executeQuery<R>(namedQuery(text, parameters, statementName(text, names)))
      : plain<R>(text, parameters);
  };
}
