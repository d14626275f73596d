import type { ActionDeadline } from "../state/rows.js";

/**
 * How long a pending action may wait: `in` milliseconds from the moment it opens, or until the
 * instant `at`. When it passes, the action resolves as `onDeadline` says (`cancel` by default)
 * and the model reads `reason`, exactly as if a client had answered that way.
 */
export type DeadlineInput = ({ in: number; at?: never } | { at: Date | string; in?: never }) & {
  /** What the wait ends as: a cancelled call (the default) or a failed one. */
  onDeadline?: "cancel" | "fail";
  /** What the model reads when the deadline passes (at most 1,000 characters). */
  reason?: string;
};

/**
 * The deadline of a client-routed tool's calls: fixed, or chosen per call from the call's
 * input (`null`: this call waits without a deadline).
 */
export type ToolDeadline<TInput = unknown> = DeadlineInput | ((input: TInput) => DeadlineInput | null);

/** Options of `ctx.suspend`. */
export type SuspendOptions = {
  /** This wait's deadline, overriding the suspend point's; `null` waits without one. */
  deadline?: DeadlineInput | null;
};

/** The reason the model reads when a deadline declares none. */
export const DEFAULT_DEADLINE_REASON = "No answer arrived before the deadline.";

/** A year and a day: long enough for any human wait, short enough to catch a unit mistake. */
export const MAX_DEADLINE_MS = 366 * 24 * 60 * 60 * 1000;

export const MAX_DEADLINE_REASON_CHARS = 1_000;

const KEYS = new Set(["in", "at", "onDeadline", "reason"]);

// Date-only (UTC midnight) or date-time with an explicit offset: a bare local time would mean
// a different instant on every server that reads it.
const ISO_INSTANT = /^\d{4}-\d{2}-\d{2}(?:T\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?(?:Z|[+-]\d{2}:?\d{2}))?$/i;

type Checked = { ok: true; resolve: (now: string) => ActionDeadline } | { ok: false; message: string };

function problem(message: string): Checked {
  return { ok: false, message };
}

/** The instant `at` denotes as an ISO string, or null when it is not a usable instant. */
function instantOf(at: unknown): string | null {
  let time: number;
  if (at instanceof Date) time = at.getTime();
  else if (typeof at === "string" && ISO_INSTANT.test(at.trim())) time = Date.parse(at.trim());
  else return null;
  if (!Number.isFinite(time)) return null;
  const iso = new Date(time).toISOString();
  // Rows compare deadlines as strings, which orders only four-digit years.
  return /^\d{4}-/.test(iso) ? iso : null;
}

function check(value: unknown): Checked {
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    return problem(`expected { in: milliseconds } or { at: instant }, got ${describe(value)}`);
  }
  const record = value as Record<string, unknown>;
  const unknownKey = Object.keys(record).find((key) => !KEYS.has(key));
  if (unknownKey !== undefined) {
    return problem(
      `unknown key "${unknownKey}" (a deadline has in or at, and optionally onDeadline and reason)`,
    );
  }
  const hasIn = record.in !== undefined;
  const hasAt = record.at !== undefined;
  if (hasIn === hasAt) {
    return problem(
      hasIn ? "give either in or at, not both" : "give in (milliseconds from now) or at (an instant)",
    );
  }
  const resolution = record.onDeadline ?? "cancel";
  if (resolution !== "cancel" && resolution !== "fail") {
    return problem(`onDeadline must be "cancel" or "fail", got ${describe(record.onDeadline)}`);
  }
  const reason = record.reason ?? DEFAULT_DEADLINE_REASON;
  if (typeof reason !== "string" || reason.trim() === "") {
    return problem(`reason must be a non-empty string, got ${describe(record.reason)}`);
  }
  if (reason.length > MAX_DEADLINE_REASON_CHARS) {
    return problem(
      `reason has ${reason.length} characters; at most ${MAX_DEADLINE_REASON_CHARS} are allowed`,
    );
  }
  if (hasIn) {
    const ms = record.in;
    if (typeof ms !== "number" || !Number.isInteger(ms) || ms < 1 || ms > MAX_DEADLINE_MS) {
      return problem(
        `in must be a whole number of milliseconds from 1 to ${MAX_DEADLINE_MS} (366 days), got ${describe(ms)}`,
      );
    }
    return {
      ok: true,
      resolve: (now) => ({ at: new Date(Date.parse(now) + ms).toISOString(), resolution, reason }),
    };
  }
  const at = instantOf(record.at);
  if (at === null) {
    return problem(
      `at must be a valid Date or an ISO 8601 instant with a time zone (e.g. "2030-01-01T09:00:00Z"), got ${describe(record.at)}`,
    );
  }
  // An instant already past is allowed: the action resolves at the next wake-up.
  return { ok: true, resolve: () => ({ at, resolution, reason }) };
}

function describe(value: unknown): string {
  if (value instanceof Date)
    return Number.isNaN(value.getTime()) ? "an invalid Date" : "a Date outside the years 0000 to 9999";
  if (typeof value === "string") return JSON.stringify(value.length > 60 ? `${value.slice(0, 60)}…` : value);
  if (typeof value === "number" || typeof value === "boolean" || value == null) return String(value);
  return Array.isArray(value) ? "an array" : typeof value;
}

/** Why a declared deadline can never be used, or null when it is well formed. */
export function deadlineProblem(value: unknown): string | null {
  const checked = check(value);
  return checked.ok ? null : checked.message;
}

/**
 * Turns a deadline as a tool wrote it into the row's `ActionDeadline`, relative to `now` (the
 * ISO instant the action opens). `null` and `undefined` mean no deadline.
 */
export function resolveDeadline(
  value: unknown,
  now: string,
): { ok: true; deadline: ActionDeadline | null } | { ok: false; message: string } {
  if (value === null || value === undefined) return { ok: true, deadline: null };
  const checked = check(value);
  return checked.ok ? { ok: true, deadline: checked.resolve(now) } : checked;
}
