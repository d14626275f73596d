import { Validator } from "@cfworker/json-schema";
import { jsonSchema } from "ai";
import type { PaiIssue } from "../errors/pai-error.js";
import type { JsonObject } from "../json/json-value.js";
import { formatIssues } from "./schema.js";

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

/**
 * Wraps a plain JSON Schema (as clients send for frontend-defined tools) into an AI SDK
 * schema that really validates, so invalid client output is rejected with issues.
 */
export function validatingJsonSchema(schema: JsonObject) {
  const validator = new Validator(schema as never, "2020-12", false);
  return jsonSchema(schema as never, {
    validate: (value: unknown) => {
      const result = validator.validate(value);
      if (result.valid) return { success: true as const, value };
      // The innermost errors say what is wrong; the outer ones only say "a child failed".
      const leaves = result.errors.filter(
        (error) =>
          !["properties", "items", "allOf", "$ref"].includes(error.keyword) || result.errors.length === 1,
      );
      const issues: PaiIssue[] = (leaves.length > 0 ? leaves : result.errors).map((error) => ({
        message: error.error,
        path: pathOf(error.instanceLocation),
      }));
      return { success: false as const, error: Object.assign(new Error(formatIssues(issues)), { issues }) };
    },
  });
}
