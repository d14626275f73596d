import { Validator } from "@cfworker/json-schema";
import { jsonSchema } from "ai";
import type { PaiIssue } from "../errors/pai-error.js";
import type { JsonObject } from "../json/json-value.js";
import { formatIssues } from "./schema.js";

/**
 * Keywords never checked against a client's JSON Schema. `pattern` and `patternProperties` run a
 * client-chosen regular expression (one that backtracks catastrophically blocks the event loop for
 * every tenant); `format` runs the validator's own regular expressions, some of which backtrack
 * exponentially on crafted strings (`url`), and is only an annotation in draft 2020-12 anyway;
 * `uniqueItems` compares every pair of items. All of them are about content, not shape.
 */
const UNCHECKED_KEYWORDS = new Set(["pattern", "patternProperties", "format", "uniqueItems"]);

/** Keywords whose values are data, never evaluated as a schema (as `@cfworker/json-schema` reads them). */
const DATA_KEYWORDS = new Set([
  "id",
  "$id",
  "$ref",
  "$schema",
  "$anchor",
  "$vocabulary",
  "$comment",
  "default",
  "enum",
  "const",
  "required",
  "dependentRequired",
  "type",
  "maximum",
  "minimum",
  "exclusiveMaximum",
  "exclusiveMinimum",
  "multipleOf",
  "maxLength",
  "minLength",
  "maxItems",
  "minItems",
  "maxProperties",
  "minProperties",
]);

/** Keywords whose value maps names (property names, definition names) to schemas. */
const MAP_KEYWORDS = new Set(["properties", "$defs", "definitions", "dependentSchemas", "dependencies"]);

const REF_KEYWORDS = ["$ref", "$recursiveRef", "$dynamicRef"];

/**
 * Work allowed for checking one payload against a client's schema, in subschema evaluations: a
 * base plus an allowance per JSON value of the payload (a sane schema evaluates each value a few
 * times), up to a ceiling. `$ref` chains and wide combinators that multiply the work, or keywords
 * repeated on one huge string or object, run out of it instead of blocking the process. Counted,
 * not timed, so the same payload gets the same answer on a busy server as on an idle one.
 */
const EVALUATIONS = { base: 10_000, perValue: 4, max: 500_000 };
/** Issues reported for one invalid payload; the rest are counted. */
const MAX_ISSUES = 20;

type SchemaObject = Record<string, unknown>;
type Relaxed = { schema: unknown; relaxed: boolean };

function isObject(value: unknown): value is SchemaObject {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function addAllOf(schema: SchemaObject, extra: unknown) {
  const allOf = schema.allOf;
  if (Array.isArray(allOf)) schema.allOf = [...allOf, extra];
  else schema.allOf = allOf === undefined ? [extra] : [{ allOf }, extra];
}

/**
 * A copy of a client's schema without the unchecked keywords that accepts everything the original
 * accepts. Dropping a keyword only relaxes a schema where it must hold (`properties`, `allOf`,
 * `items`, ...); where it must fail or decides a branch (`not`, `if`, `oneOf`, `maxContains`) the
 * enclosing keyword is relaxed instead, and so is one that reaches a relaxed part through `$ref`.
 * Every object outside data keywords is treated as a schema, as the validator's `$ref` lookup does.
 */
function relax(node: unknown, refsAreRelaxed: boolean): Relaxed {
  if (Array.isArray(node)) {
    const items = node.map((item) => relax(item, refsAreRelaxed));
    return { schema: items.map((item) => item.schema), relaxed: items.some((item) => item.relaxed) };
  }
  if (!isObject(node)) return { schema: node, relaxed: false };
  const out: SchemaObject = {};
  const relaxedKeys = new Set<string>();
  let relaxed = refsAreRelaxed && REF_KEYWORDS.some((key) => node[key] !== undefined);
  for (const [key, value] of Object.entries(node)) {
    // Set by the validator itself while resolving `$ref`; never taken from a client.
    if (key.startsWith("__absolute_")) continue;
    if (UNCHECKED_KEYWORDS.has(key)) {
      relaxed = true;
      continue;
    }
    if (DATA_KEYWORDS.has(key)) {
      out[key] = value;
      continue;
    }
    let child: Relaxed;
    if (MAP_KEYWORDS.has(key) && isObject(value)) {
      const map: SchemaObject = {};
      let mapRelaxed = false;
      for (const [name, entry] of Object.entries(value)) {
        // `dependencies` is itself reachable as a schema, so its names are keywords there too.
        if (key === "dependencies" && UNCHECKED_KEYWORDS.has(name)) {
          mapRelaxed = true;
          continue;
        }
        const relaxedEntry = relax(entry, refsAreRelaxed);
        map[name] = relaxedEntry.schema;
        mapRelaxed ||= relaxedEntry.relaxed;
      }
      child = { schema: map, relaxed: mapRelaxed };
    } else {
      child = relax(value, refsAreRelaxed);
    }
    out[key] = child.schema;
    if (child.relaxed) relaxedKeys.add(key);
  }
  if (node.patternProperties !== undefined) {
    // Properties a pattern matched are no longer set apart from `additionalProperties`: each
    // extra property must match it or one of the pattern schemas, and counts as evaluated.
    const patterns = isObject(node.patternProperties)
      ? Object.values(node.patternProperties).map((entry) => relax(entry, refsAreRelaxed).schema)
      : [];
    out.additionalProperties =
      out.additionalProperties === undefined ? {} : { anyOf: [out.additionalProperties, ...patterns] };
  }
  if (relaxedKeys.has("not")) delete out.not;
  if (relaxedKeys.has("if")) {
    addAllOf(out, { anyOf: [{ allOf: [out.if, out.then ?? {}] }, out.else ?? {}] });
    delete out.if;
    delete out.then;
    delete out.else;
  }
  if (relaxedKeys.has("oneOf") && Array.isArray(out.oneOf)) {
    addAllOf(out, { anyOf: out.oneOf });
    delete out.oneOf;
  }
  if (relaxedKeys.has("contains")) delete out.maxContains;
  return { schema: out, relaxed: relaxed || relaxedKeys.size > 0 };
}

/** The client's schema as it is checked on the server: relaxed where it had unchecked keywords. */
export function relaxUntrustedSchema(schema: JsonObject): JsonObject {
  const first = relax(schema, false);
  return (first.relaxed ? relax(schema, true).schema : first.schema) as JsonObject;
}

const budgetExceeded = Symbol("budget exceeded");

/** Makes every schema object count its evaluations: the validator reads `$ref` once per evaluation. */
function meter(node: unknown, tick: () => void): void {
  if (Array.isArray(node)) {
    for (const item of node) meter(item, tick);
    return;
  }
  if (!isObject(node)) return;
  for (const [key, value] of Object.entries(node)) {
    if (DATA_KEYWORDS.has(key)) continue;
    if (MAP_KEYWORDS.has(key) && isObject(value)) {
      for (const entry of Object.values(value)) meter(entry, tick);
    } else {
      meter(value, tick);
    }
  }
  const ref = node.$ref;
  Object.defineProperty(node, "$ref", {
    enumerable: ref !== undefined,
    configurable: true,
    get: () => {
      tick();
      return ref;
    },
  });
}

/** The number of JSON values in a payload, counted up to `limit`. */
function countValues(value: unknown, limit: number): number {
  let count = 0;
  const stack = [value];
  while (stack.length > 0 && count < limit) {
    const current = stack.pop();
    count++;
    if (Array.isArray(current) || isObject(current)) {
      for (const item of Object.values(current)) stack.push(item);
    }
  }
  return count;
}

function pathOf(instanceLocation: string): Array<string | number> {
  return instanceLocation
    .replace(/^#\/?/, "")
    .split("/")
    .filter((segment) => segment.length > 0)
    .map((segment) => {
      const decoded = decodeURIComponent(segment.replace(/~1/g, "/").replace(/~0/g, "~"));
      return /^\d+$/.test(decoded) ? Number(decoded) : decoded;
    });
}

function failure(issues: PaiIssue[]) {
  return { success: false as const, error: Object.assign(new Error(formatIssues(issues)), { issues }) };
}

/**
 * Wraps a JSON Schema that a client declared (the schemas of frontend-defined tools) into an AI SDK
 * schema that really validates, so invalid client output is rejected with issues. This is the only
 * place the server validates against a client's schema, and it checks shape only: the keywords in
 * `UNCHECKED_KEYWORDS` are ignored (see `relaxUntrustedSchema`), so no client-chosen regular
 * expression ever runs here, and one check is bounded in evaluations (a refusal says the
 * schema is too complex). Schemas from server code never come here: they validate as defined.
 */
export function validatingJsonSchema(schema: JsonObject) {
  let metering = false;
  let evaluations = 0;
  let maxEvaluations = 0;
  let validator: Validator | undefined;
  try {
    const relaxed = relaxUntrustedSchema(schema);
    meter(relaxed, () => {
      if (!metering) return;
      if (++evaluations > maxEvaluations) throw budgetExceeded;
    });
    validator = new Validator(relaxed as never, "2020-12", false);
  } catch {
    // An `$id` or `$ref` the validator cannot resolve: every payload is refused below.
    validator = undefined;
  }
  return jsonSchema(schema as never, {
    validate: (value: unknown) => {
      if (!validator) {
        return failure([
          {
            message: "the tool's JSON Schema cannot be used to check it",
            path: [],
          },
        ]);
      }
      const values = countValues(value, EVALUATIONS.max);
      maxEvaluations = Math.min(EVALUATIONS.max, EVALUATIONS.base + EVALUATIONS.perValue * values);
      evaluations = 0;
      metering = true;
      let result: ReturnType<Validator["validate"]>;
      try {
        result = validator.validate(value);
      } catch (error) {
        return failure([
          {
            message:
              error === budgetExceeded
                ? "the tool's JSON Schema is too complex to check this payload within the server's limits"
                : "the tool's JSON Schema cannot be used to check it",
            path: [],
          },
        ]);
      } finally {
        metering = false;
      }
      if (result.valid) return { success: true as const, value };
      // The innermost errors say what is wrong; the outer ones only say "a child failed".
      const leaves = result.errors.filter(
        (error) =>
          !["properties", "items", "allOf", "$ref"].includes(error.keyword) || result.errors.length === 1,
      );
      const errors = leaves.length > 0 ? leaves : result.errors;
      const issues: PaiIssue[] = errors.slice(0, MAX_ISSUES).map((error) => ({
        message: error.error,
        path: pathOf(error.instanceLocation),
      }));
      if (errors.length > MAX_ISSUES) {
        issues.push({ message: `and ${errors.length - MAX_ISSUES} more issues`, path: [] });
      }
      return failure(issues);
    },
  });
}
