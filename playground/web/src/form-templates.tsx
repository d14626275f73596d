import { errorId, type FieldErrorProps, type FieldTemplateProps } from "@rjsf/utils";
import type { ReactNode } from "react";

/**
 * One field of a generated form: label, the schema's description, the input, then its errors.
 * An error is added below the input and never takes the description's place, so the hint that
 * says what to enter stays in view while the person fixes the value.
 */
export function FieldTemplate(props: FieldTemplateProps): ReactNode {
  const { id, classNames, label, required, displayLabel, description, rawDescription, errors, help } = props;
  if (props.hidden) return <div hidden>{props.children}</div>;
  const optional = !required && props.schema.type !== "boolean";
  // A field without a title is labelled by its description (see uiSchemaOf): say it once.
  const showDescription = displayLabel && rawDescription && rawDescription !== label;
  return (
    <div className={classNames}>
      {displayLabel ? <label htmlFor={id}>{`${label}${optional ? " (optional)" : ""}`}</label> : null}
      {showDescription ? description : null}
      {props.children}
      {errors}
      {help}
    </div>
  );
}

/** A field's errors as one line under its input; the input's aria-describedby points here. */
export function FieldErrorTemplate({ errors = [], fieldPathId }: FieldErrorProps): ReactNode {
  // Client and server checks can report the same message; say it once.
  const messages = [...new Set(errors.filter((error): error is string => typeof error === "string"))];
  if (messages.length === 0) return null;
  return (
    <p id={errorId(fieldPathId)} className="field-error" role="alert">
      {messages.join(" ")}
    </p>
  );
}

export const formTemplates = { FieldTemplate, FieldErrorTemplate };
