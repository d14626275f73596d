import type { PaiIssue } from "@pai/core";
import type { ErrorSchema, RJSFValidationError } from "@rjsf/utils";

const plural = (count: unknown, word: string) => `${count} ${word}${count === 1 ? "" : "s"}`;

/** One validation error in words a person filling the form understands (Ajv says "must be <= 8"). */
export function friendlyMessage(error: Pick<RJSFValidationError, "name" | "params" | "message">): string {
  const params = error.params ?? {};
  switch (error.name) {
    case "required":
      return "This field is required.";
    case "minimum":
      return `Must be at least ${params.limit}.`;
    case "maximum":
      return `Must be at most ${params.limit}.`;
    case "exclusiveMinimum":
      return `Must be more than ${params.limit}.`;
    case "exclusiveMaximum":
      return `Must be less than ${params.limit}.`;
    case "minLength":
      return `Use at least ${plural(params.limit, "character")}.`;
    case "maxLength":
      return `Use at most ${plural(params.limit, "character")}.`;
    case "type":
      if (params.type === "integer") return "Enter a whole number.";
      if (params.type === "number") return "Enter a number.";
      break;
    case "format":
      if (params.format === "uri" || params.format === "url") return "Enter a full URL (https://...).";
      if (params.format === "email") return "Enter an email address.";
      return `Enter a valid ${params.format}.`;
    case "enum":
      return `Choose one of: ${(params.allowedValues ?? []).join(", ")}.`;
    case "pattern":
      return "Use the expected format.";
  }
  return error.message ? `${error.message.charAt(0).toUpperCase()}${error.message.slice(1)}.` : "Not valid.";
}

/** rjsf's `transformErrors`: the same errors, reworded. */
export function friendlyErrors(errors: RJSFValidationError[]): RJSFValidationError[] {
  return errors.map((error) => ({ ...error, message: friendlyMessage(error) }));
}

/**
 * The server's validation issues of a rejected answer, by field (rjsf's `extraErrors`). Issues
 * may be rooted at the payload (`payload.audience`) or at the field itself.
 */
export function issuesByField(error: unknown, fields: readonly string[]): ErrorSchema {
  const issues = (error as { issues?: PaiIssue[] } | null)?.issues ?? [];
  const byField: Record<string, { __errors: string[] }> = {};
  for (const issue of issues) {
    const name = issue.path.map(String).find((segment) => fields.includes(segment));
    if (!name) continue;
    byField[name] ??= { __errors: [] };
    byField[name].__errors.push(issue.message);
  }
  return byField as ErrorSchema;
}
