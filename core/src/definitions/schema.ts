import { asSchema, type FlexibleSchema, type JSONSchema7, type Schema } from "ai";
import type { PaiIssue } from "../errors/pai-error.js";

/**
 * A tool schema: a Zod 4 schema, any Standard Schema, or the AI SDK's `jsonSchema()`.
 * Parsed types are inferred for all of them (see `ParsedToolSchema`).
 */
export type ToolSchema = FlexibleSchema<any>;

export type SchemaValidationResult<T = unknown> =
  | { success: true; value: T }
  | { success: false; issues: PaiIssue[]; message: string };

function issuesFromError(error: unknown): PaiIssue[] {
  const raw = (error as { issues?: unknown; cause?: { issues?: unknown } } | undefined) ?? {};
  const list = Array.isArray(raw.issues)
    ? raw.issues
    : Array.isArray(raw.cause?.issues)
      ? raw.cause.issues
      : null;
  if (list) {
    return list.map(
      (issue: { message?: string; path?: ReadonlyArray<PropertyKey | { key: PropertyKey }> }) => ({
        message: String(issue.message ?? "Invalid value"),
        path: (issue.path ?? []).map((segment) => {
          const key = typeof segment === "object" && segment !== null ? segment.key : segment;
          return typeof key === "number" ? key : String(key);
        }),
      }),
    );
  }
  return [{ message: error instanceof Error ? error.message : "Invalid value", path: [] }];
}

/** Formats issues as one sentence fragment: `title: Required; items[0]: Expected number`. */
export function formatIssues(issues: PaiIssue[]): string {
  return issues
    .map((issue) => {
      const path = issue.path
        .map((segment, index) =>
          typeof segment === "number" ? `[${segment}]` : index === 0 ? segment : `.${segment}`,
        )
        .join("");
      return path ? `${path}: ${issue.message}` : issue.message;
    })
    .join("; ");
}

const sdkSchemas = new WeakMap<object, Schema<unknown>>();

/**
 * The AI SDK view of a tool schema, made once per schema object. `asSchema` builds a new
 * wrapper (and for Zod re-reads its locale config) on every call, which cost several times
 * more than the validation itself; tool schemas are immutable, so the wrapper can be reused.
 */
export function sdkSchemaOf(schema: ToolSchema): Schema<unknown> {
  if (schema === null || schema === undefined) return asSchema(schema);
  const key = schema as object;
  let sdkSchema = sdkSchemas.get(key);
  if (!sdkSchema) {
    sdkSchema = asSchema(schema) as Schema<unknown>;
    sdkSchemas.set(key, sdkSchema);
  }
  return sdkSchema;
}

/** Validates and parses a value (defaults and transforms applied). Never throws for invalid input. */
export async function validateSchema<T = unknown>(
  schema: ToolSchema,
  value: unknown,
): Promise<SchemaValidationResult<T>> {
  const sdkSchema = sdkSchemaOf(schema);
  if (!sdkSchema.validate) return { success: true, value: value as T };
  try {
    const result = await sdkSchema.validate(value);
    if (result.success) return { success: true, value: result.value as T };
    const issues = issuesFromError(result.error);
    return { success: false, issues, message: formatIssues(issues) };
  } catch (error) {
    const issues = issuesFromError(error);
    return { success: false, issues, message: formatIssues(issues) };
  }
}

/** The JSON Schema a provider receives for a tool schema. */
export async function toJsonSchema(schema: ToolSchema): Promise<JSONSchema7> {
  // Uncached on purpose: callers get a JSON Schema object of their own (not a hot path).
  return await asSchema(schema).jsonSchema;
}
