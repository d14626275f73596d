/**
 * PAI dispatch on BullMQ: runs, deadlines and schedules travel as jobs of a Redis queue, so
 * API processes and worker processes can scale apart.
 *
 * @example
 * ```ts
 * import { bullMqDispatch } from "@pai/dispatch-bullmq";
 *
 * const dispatch = bullMqDispatch({ connection: process.env.REDIS_URL! });
 * ```
 *
 * @packageDocumentation
 */
export { type BullMqDispatch, bullMqDispatch } from "./bullmq-dispatch.js";
export type { BullMqDispatchOptions, BullMqKeepJobs } from "./options.js";
