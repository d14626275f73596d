/**
 * `@pai/dispatch-pgboss`: PAI's dispatch port on pg-boss, a job queue in Postgres. API processes
 * send runs, deadlines and schedule wake-ups as jobs; worker processes anywhere take them, at
 * least once each.
 *
 * @packageDocumentation
 */

export type {
  PgBossDispatchConnectionOptions,
  PgBossDispatchInstanceOptions,
  PgBossDispatchOptions,
  PgBossDispatchSettings,
} from "./options.js";
export { type PgBossDispatch, pgBossDispatch } from "./pgboss-dispatch.js";
