import type { PaiIssue } from "@pai/core";
import { type FormEvent, type ReactNode, useId, useState } from "react";

/** The subset of JSON Schema the generated forms understand (what Zod's JSON Schema output uses). */
export type FieldSchema = {
  type?: string | string[];
  description?: string;
  title?: string;
  enum?: unknown[];
  const?: unknown;
  format?: string;
  minLength?: number;
  maxLength?: number;
  minimum?: number;
  maximum?: number;
  exclusiveMinimum?: number;
  exclusiveMaximum?: number;
  pattern?: string;
  default?: unknown;
  properties?: Record<string, FieldSchema>;
  required?: string[];
  items?: FieldSchema;
};

type Values = Record<string, unknown>;
type Errors = Record<string, string>;

const typeOf = (schema: FieldSchema): string => {
  if (Array.isArray(schema.type)) return schema.type.find((type) => type !== "null") ?? "string";
  if (schema.type) return schema.type;
  if (schema.enum) return "string";
  return "string";
};

const labelOf = (name: string, schema: FieldSchema) =>
  schema.title ?? schema.description ?? name.replace(/([A-Z])/g, " $1").replace(/^./, (c) => c.toUpperCase());

function initialValues(schema: FieldSchema): Values {
  const values: Values = {};
  for (const [name, field] of Object.entries(schema.properties ?? {})) {
    const type = typeOf(field);
    if (field.default !== undefined) values[name] = field.default;
    else if (type === "boolean") values[name] = false;
    else if (field.enum) values[name] = field.enum[0];
    else values[name] = "";
  }
  return values;
}

/** Client-side checks from the schema; the server validates again and has the last word. */
export function validateValues(schema: FieldSchema, values: Values): { value: Values; errors: Errors } {
  const errors: Errors = {};
  const value: Values = {};
  const required = new Set(schema.required ?? []);
  for (const [name, field] of Object.entries(schema.properties ?? {})) {
    const raw = values[name];
    const type = typeOf(field);
    const empty = raw === "" || raw === undefined || raw === null;
    if (empty) {
      if (required.has(name) && type !== "boolean") errors[name] = "This field is required.";
      continue;
    }
    if (type === "number" || type === "integer") {
      const number = Number(raw);
      if (!Number.isFinite(number)) errors[name] = "Enter a number.";
      else if (type === "integer" && !Number.isInteger(number)) errors[name] = "Enter a whole number.";
      else if (field.minimum !== undefined && number < field.minimum)
        errors[name] = `Must be at least ${field.minimum}.`;
      else if (field.maximum !== undefined && number > field.maximum)
        errors[name] = `Must be at most ${field.maximum}.`;
      value[name] = number;
      continue;
    }
    if (type === "boolean") {
      value[name] = raw === true;
      continue;
    }
    if (type === "array") {
      value[name] = String(raw)
        .split("\n")
        .map((line) => line.trim())
        .filter(Boolean);
      continue;
    }
    const text = String(raw);
    if (field.minLength !== undefined && text.length < field.minLength)
      errors[name] = `Use at least ${field.minLength} characters.`;
    else if (field.maxLength !== undefined && text.length > field.maxLength)
      errors[name] = `Use at most ${field.maxLength} characters.`;
    else if (field.format === "uri" && !URL.canParse(text)) errors[name] = "Enter a full URL (https://...).";
    else if (field.format === "email" && !/^[^@\s]+@[^@\s]+$/.test(text))
      errors[name] = "Enter an email address.";
    else if (field.enum && !field.enum.includes(text))
      errors[name] = `Choose one of: ${field.enum.join(", ")}.`;
    value[name] = text;
  }
  return { value, errors };
}

export type SchemaFormProps = {
  /** An object JSON Schema (a resume schema or a client tool's output schema). */
  schema: FieldSchema;
  /**
   * A required boolean field rendered as two submit buttons (e.g. `approved`: Approve / Reject)
   * instead of a checkbox.
   */
  decision?: { field: string; yes: string; no: string };
  submitLabel?: string;
  /** Sends the payload; rejecting with a PaiError (issues by path) shows the messages at the fields. */
  onSubmit(payload: Values): Promise<unknown>;
  onCancel?: () => Promise<unknown>;
  testId?: string;
};

/** A form generated from a JSON Schema, with client-side and server-side validation messages. */
export function SchemaForm({
  schema,
  decision,
  submitLabel = "Submit",
  onSubmit,
  onCancel,
  testId,
}: SchemaFormProps): ReactNode {
  const formId = useId();
  const [values, setValues] = useState<Values>(() => initialValues(schema));
  const [errors, setErrors] = useState<Errors>({});
  const [formError, setFormError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const fields = Object.entries(schema.properties ?? {}).filter(([name]) => name !== decision?.field);
  const required = new Set(schema.required ?? []);

  const send = async (extra: Values) => {
    const checked = validateValues(schema, values);
    setErrors(checked.errors);
    setFormError(null);
    if (Object.keys(checked.errors).length > 0) return;
    setBusy(true);
    try {
      await onSubmit({ ...checked.value, ...extra });
    } catch (error) {
      const issues = (error as { issues?: PaiIssue[] }).issues ?? [];
      const byField: Errors = {};
      for (const issue of issues) {
        // Issues may be rooted at the payload (`payload.audience`) or at the field itself.
        const name = issue.path.map(String).find((segment) => segment in (schema.properties ?? {}));
        if (name) byField[name] = issue.message;
      }
      setErrors(byField);
      setFormError((error as Error).message ?? "The server rejected the answer.");
    } finally {
      setBusy(false);
    }
  };

  const submit = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const submitter = (event.nativeEvent as SubmitEvent).submitter as HTMLButtonElement | null;
    const extra: Values = decision ? { [decision.field]: submitter?.value === "yes" } : {};
    void send(extra);
  };

  return (
    <form className="schema-form" onSubmit={submit} noValidate data-testid={testId}>
      {fields.map(([name, field]) => {
        const type = typeOf(field);
        const id = `${formId}-${name}`;
        const error = errors[name];
        const label = `${labelOf(name, field)}${required.has(name) || type === "boolean" ? "" : " (optional)"}`;
        const set = (value: unknown) => setValues((current) => ({ ...current, [name]: value }));
        let input: ReactNode;
        if (type === "boolean") {
          input = (
            <input
              id={id}
              name={name}
              type="checkbox"
              checked={values[name] === true}
              onChange={(event) => set(event.target.checked)}
            />
          );
        } else if (field.enum) {
          input = (
            <select
              id={id}
              name={name}
              value={String(values[name] ?? "")}
              onChange={(e) => set(e.target.value)}
            >
              {field.enum.map((option) => (
                <option key={String(option)} value={String(option)}>
                  {String(option)}
                </option>
              ))}
            </select>
          );
        } else if (type === "array") {
          input = (
            <textarea
              id={id}
              name={name}
              rows={3}
              placeholder="One item per line"
              value={String(values[name] ?? "")}
              onChange={(e) => set(e.target.value)}
            />
          );
        } else {
          input = (
            <input
              id={id}
              name={name}
              type={
                type === "number" || type === "integer" ? "number" : field.format === "uri" ? "url" : "text"
              }
              value={String(values[name] ?? "")}
              onChange={(e) => set(e.target.value)}
              aria-invalid={error ? true : undefined}
              aria-describedby={error ? `${id}-error` : undefined}
            />
          );
        }
        return (
          <div className={`field field-${type}`} key={name}>
            <label htmlFor={id}>{label}</label>
            {input}
            {error ? (
              <p className="field-error" id={`${id}-error`} role="alert">
                {error}
              </p>
            ) : null}
          </div>
        );
      })}
      {formError ? (
        <p className="form-error" role="alert">
          {formError}
        </p>
      ) : null}
      <div className="form-actions">
        {decision ? (
          <>
            <button type="submit" value="yes" disabled={busy}>
              {decision.yes}
            </button>
            <button type="submit" value="no" className="secondary" disabled={busy}>
              {decision.no}
            </button>
          </>
        ) : (
          <button type="submit" disabled={busy}>
            {submitLabel}
          </button>
        )}
        {onCancel ? (
          <button
            type="button"
            className="link"
            disabled={busy}
            onClick={() => {
              setBusy(true);
              void onCancel().finally(() => setBusy(false));
            }}
          >
            Cancel action
          </button>
        ) : null}
      </div>
    </form>
  );
}
