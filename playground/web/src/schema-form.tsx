import Form from "@rjsf/core";
import type { ErrorSchema, RJSFSchema, UiSchema } from "@rjsf/utils";
import validator from "@rjsf/validator-ajv8";
import { type ReactNode, useEffect, useId, useMemo, useRef, useState } from "react";
import { friendlyErrors, issuesByField } from "./form-messages.js";
import { formTemplates } from "./form-templates.js";

/** The parts of a JSON Schema the playground reads itself; rjsf reads the rest. */
export type FieldSchema = {
  type?: string | string[];
  title?: string;
  description?: string;
  properties?: Record<string, FieldSchema>;
  required?: string[];
  [keyword: string]: unknown;
};

type Values = Record<string, unknown>;

const humanize = (name: string) =>
  name.replace(/([a-z])([A-Z])/g, "$1 $2").replace(/^./, (first) => first.toUpperCase());

/** The schema rjsf renders: without the decision field, which the two submit buttons answer. */
function formSchemaOf(schema: FieldSchema, decisionField: string | undefined): RJSFSchema {
  if (!decisionField) return schema as RJSFSchema;
  const { [decisionField]: _decision, ...properties } = schema.properties ?? {};
  const required = (schema.required ?? []).filter((name) => name !== decisionField);
  return { ...schema, properties, required } as RJSFSchema;
}

/** A field without a title is labelled by its description (Zod's `.describe()`), else by its name. */
function uiSchemaOf(schema: RJSFSchema): UiSchema {
  const ui: UiSchema = {};
  for (const [name, field] of Object.entries(schema.properties ?? {})) {
    if (typeof field !== "object" || field.title) continue;
    ui[name] = { "ui:title": field.description ?? humanize(name), "ui:description": "" };
  }
  return ui;
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
  /**
   * The state a failed submit was made on (e.g. the thread's version). When it changes, the
   * failure is stale and its messages are cleared.
   */
  staleAfter?: unknown;
  testId?: string;
};

/** A form generated from a JSON Schema by rjsf: client-side checks, then the server's messages. */
export function SchemaForm({
  schema,
  decision,
  submitLabel = "Submit",
  onSubmit,
  onCancel,
  staleAfter,
  testId,
}: SchemaFormProps): ReactNode {
  const idPrefix = useId();
  const formSchema = useMemo(() => formSchemaOf(schema, decision?.field), [schema, decision?.field]);
  const uiSchema = useMemo(() => uiSchemaOf(formSchema), [formSchema]);
  const fields = useMemo(() => Object.keys(formSchema.properties ?? {}), [formSchema]);
  const [values, setValues] = useState<Values>({});
  const [serverErrors, setServerErrors] = useState<ErrorSchema | undefined>(undefined);
  const [formError, setFormError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  // Which decision button submitted the form: set on click, which runs before submit.
  const decided = useRef(false);

  // Same rule as the conversation's composer: a failure describes the state it was made on.
  // biome-ignore lint/correctness/useExhaustiveDependencies: clear whenever that state moves on.
  useEffect(() => {
    setFormError(null);
    setServerErrors(undefined);
  }, [staleAfter]);

  const send = async (formData: Values) => {
    setFormError(null);
    setServerErrors(undefined);
    setBusy(true);
    try {
      await onSubmit(decision ? { ...formData, [decision.field]: decided.current } : formData);
    } catch (error) {
      setServerErrors(issuesByField(error, fields));
      setFormError((error as Error).message || "The server rejected the answer.");
    } finally {
      setBusy(false);
    }
  };

  return (
    <div className="schema-form" data-testid={testId}>
      <Form
        idPrefix={`form${idPrefix.replace(/[^A-Za-z0-9_-]/g, "")}`}
        schema={formSchema}
        uiSchema={uiSchema}
        validator={validator}
        templates={formTemplates}
        formData={values}
        onChange={(event) => setValues((event.formData ?? {}) as Values)}
        onSubmit={(event) => void send((event.formData ?? {}) as Values)}
        {...(serverErrors ? { extraErrors: serverErrors } : {})}
        transformErrors={friendlyErrors}
        // The messages are shown at the fields; rjsf's default also logs them to the console.
        onError={() => undefined}
        showErrorList={false}
        noHtml5Validate
        focusOnFirstError
      >
        {formError ? (
          <p className="form-error" role="alert" data-testid="form-error">
            {formError}
          </p>
        ) : null}
        <div className="form-actions">
          {decision ? (
            <>
              <button
                type="submit"
                disabled={busy}
                onClick={() => {
                  decided.current = true;
                }}
              >
                {decision.yes}
              </button>
              <button
                type="submit"
                className="secondary"
                disabled={busy}
                onClick={() => {
                  decided.current = false;
                }}
              >
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
      </Form>
    </div>
  );
}
