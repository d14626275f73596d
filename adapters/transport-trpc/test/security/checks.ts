import type { Expectation } from "./cases.js";
import type { Outcome } from "./raw-http.js";

/**
 * Judges outcomes and returns problems as sentences (an empty list is a pass), so one case
 * reports everything wrong with it at once.
 */

/** Text that only a server's internals produce: stacks, SQL and driver errors, file paths. */
const INTERNAL_TEXT: RegExp[] = [
  /out of range for type/i,
  /\bER_[A-Z_]{3,}/,
  /Maximum call stack/i,
  /stack depth limit/i,
  /syntax error at or near/i,
  /SQLSTATE/i,
  /duplicate (key|entry)/i,
  /violates [a-z ]*constraint/i,
  /relation "[^"]*" does not exist/i,
  /Incorrect [a-z]+ value/i,
  /Data too long/i,
  /\b(select|insert into|update|delete from)\b[^"]{0,80}\b(from|values|set|where)\b/i,
  /node_modules/,
  /\.[cm]?[jt]s:\d+/,
  /\n\s+at\s/,
  /\bat (async )?[\w$.<>]+ \(/,
];

/** How a 500 may carry the id that finds its log entry. */
const CORRELATION = /\b(correlation|error|request|incident|trace)[ _-]?id\b|\b[0-9a-f]{8}-[0-9a-f]{4}-/i;

function hasCorrelationField(shape: Record<string, any> | undefined): boolean {
  const data = shape?.data ?? {};
  return [data, data.pai ?? {}].some((record: Record<string, unknown>) =>
    Object.keys(record).some((key) => /^(correlationId|errorId|requestId|incidentId|traceId)$/i.test(key)),
  );
}

/** The most a refusal may weigh: an answer that echoes a huge input is a problem of its own. */
const MAX_MESSAGE = 4_096;
const MAX_ERROR_BODY = 65_536;

export function describeOutcome(outcome: Outcome): string {
  const code = [outcome.code, outcome.paiCode].filter(Boolean).join("/");
  const transport = outcome.transport === "sse" ? ` (SSE, HTTP ${outcome.httpStatus})` : "";
  const message = outcome.message.length > 240 ? `${outcome.message.slice(0, 240)}…` : outcome.message;
  return `${outcome.status}${code ? ` ${code}` : ""}${transport}: ${JSON.stringify(message)}`;
}

/**
 * Nothing of A's in what B received: no secret anywhere in the text, and none of A's ids as a
 * whole JSON string (a listing must not carry them; refusals may echo an id B sent).
 */
export function leakProblems(
  outcome: Outcome,
  secrets: readonly string[],
  ids: readonly string[] = [],
): string[] {
  const problems = secrets
    .filter((secret) => outcome.bodyText.includes(secret))
    .map((secret) => `the answer contains A's ${JSON.stringify(secret)}`);
  for (const id of ids) {
    // Quoted, so an id like "call-2" does not match "call-21"; escaped quotes cover superjson's nesting.
    if (outcome.bodyText.includes(`"${id}"`) || outcome.bodyText.includes(`\\"${id}\\"`)) {
      problems.push(`the answer carries A's id ${JSON.stringify(id)}`);
    }
  }
  return problems;
}

export function internalTextProblems(outcome: Outcome, extra: readonly string[]): string[] {
  const problems: string[] = [];
  const text = outcome.bodyText;
  for (const pattern of INTERNAL_TEXT) {
    if (pattern.test(text)) problems.push(`the answer has server-internal text matching ${pattern}`);
  }
  for (const word of extra) {
    if (text.includes(word)) problems.push(`the answer names ${JSON.stringify(word)}`);
  }
  if (outcome.shape?.data?.stack !== undefined) problems.push("the error shape carries a stack");
  return problems;
}

/** A refusal a developer can act on: 4xx, a message, nothing internal. */
export function refusalProblems(
  outcome: Outcome,
  expectation: { status?: number; mentions?: Array<string | RegExp> },
  internalWords: readonly string[],
): string[] {
  const problems: string[] = [];
  if (outcome.status === 0) {
    problems.push(`no HTTP answer (${outcome.message})`);
    return problems;
  }
  if (outcome.ok) {
    problems.push(`expected a refusal, got ${describeOutcome(outcome)}`);
    return problems;
  }
  if (outcome.status >= 500) {
    const correlated = CORRELATION.test(outcome.message) || hasCorrelationField(outcome.shape);
    problems.push(
      `server error ${describeOutcome(outcome)}${correlated ? "" : " (and no correlation id in the answer)"}`,
    );
  } else if (outcome.status < 400) problems.push(`expected a 4xx, got ${describeOutcome(outcome)}`);
  else if (expectation.status !== undefined && outcome.status !== expectation.status) {
    problems.push(`expected ${expectation.status}, got ${describeOutcome(outcome)}`);
  }
  if (outcome.message.trim().length === 0) problems.push(`empty error message (${describeOutcome(outcome)})`);
  if (outcome.message.length > MAX_MESSAGE) {
    problems.push(`error message of ${outcome.message.length} characters (echoes the input?)`);
  }
  if (outcome.bodyText.length > MAX_ERROR_BODY) {
    problems.push(`error body of ${outcome.bodyText.length} characters (echoes the input?)`);
  }
  for (const mention of expectation.mentions ?? []) {
    const found =
      typeof mention === "string" ? outcome.message.includes(mention) : mention.test(outcome.message);
    if (!found) problems.push(`the message does not name ${String(mention)}: ${describeOutcome(outcome)}`);
  }
  problems.push(...internalTextProblems(outcome, internalWords));
  return problems;
}

function blank(text: string, ids: readonly string[]): string {
  let result = text;
  for (const id of ids) result = result.split(id).join("<id>");
  return result;
}

/** Outcomes for A's ids and for fresh ids must be indistinguishable. */
export function oracleProblems(
  [foreign, fresh]: Outcome[],
  ids: readonly string[],
  expectation: Extract<Expectation, { kind: "oracle" }>,
  internalWords: readonly string[],
): string[] {
  const problems: string[] = [];
  if (!foreign || !fresh) return ["the oracle case produced fewer than two outcomes"];
  const view = (outcome: Outcome) => ({
    status: outcome.status,
    code: outcome.code,
    paiCode: outcome.paiCode,
    message: blank(outcome.message, ids),
  });
  const [left, right] = [view(foreign), view(fresh)];
  if (JSON.stringify(left) !== JSON.stringify(right)) {
    problems.push(
      `A's id is distinguishable from a fresh one: ${describeOutcome(foreign)} vs ${describeOutcome(fresh)}`,
    );
  }
  for (const outcome of [foreign, fresh]) {
    if (outcome.ok && expectation.mayAccept) {
      problems.push(...internalTextProblems(outcome, internalWords));
      continue;
    }
    const refusal = refusalProblems(
      outcome,
      expectation.refusedStatus === undefined ? {} : { status: expectation.refusedStatus },
      internalWords,
    );
    problems.push(
      ...refusal.map((problem) => (outcome === foreign ? `A's id: ${problem}` : `fresh id: ${problem}`)),
    );
  }
  return [...new Set(problems)];
}

export function acceptedProblems(outcome: Outcome, internalWords: readonly string[]): string[] {
  const problems: string[] = [];
  if (!outcome.ok || outcome.status >= 300)
    problems.push(`expected success, got ${describeOutcome(outcome)}`);
  problems.push(...internalTextProblems(outcome, internalWords));
  return problems;
}
