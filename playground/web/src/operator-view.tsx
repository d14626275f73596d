import type { ActionRow } from "@pai/core";
import { type ReactNode, useCallback, useEffect, useState } from "react";
import { DeadlineCountdown } from "./deadline-countdown.js";
import { answerSchema, useManifest } from "./manifest.js";
import { paiClient } from "./pai.js";
import { SchemaForm } from "./schema-form.js";

/** Polls a loader while mounted; `reload` runs it at once. */
export function usePolled<T>(load: () => Promise<T>, intervalMs: number) {
  const [value, setValue] = useState<T | null>(null);
  const [error, setError] = useState<string | null>(null);
  const reload = useCallback(async () => {
    try {
      setValue(await load());
      setError(null);
    } catch (caught) {
      setError((caught as Error).message);
    }
  }, [load]);
  useEffect(() => {
    void reload();
    const timer = setInterval(() => void reload(), intervalMs);
    return () => clearInterval(timer);
  }, [reload, intervalMs]);
  return { value, error, reload };
}

const loadPending = () => paiClient.listActions({ state: "pending", limit: 100 });

function OperatorAction({ action, onDone }: { action: ActionRow; onDone: () => void }): ReactNode {
  const manifest = useManifest();
  const schema = answerSchema(manifest, action.toolName, action.suspendName);
  const { actions } = paiClient.transport;
  const target = { threadId: action.threadId, actionId: action.actionId };
  const decision = schema?.properties?.approved?.type === "boolean" ? "approved" : null;
  return (
    <li className="operator-action" data-testid="operator-action" data-action={action.name}>
      <header>
        <strong>{action.name}</strong>
        <a href={`#/t/${action.threadId}`}>open thread</a>
        <span className="muted">{new Date(action.createdAt).toLocaleString()}</span>
      </header>
      <DeadlineCountdown deadline={action.deadline ?? null} />
      <InputPreview value={action.input} />
      {schema ? (
        <SchemaForm
          schema={schema}
          testId={`operator-form-${action.name}`}
          {...(decision ? { decision: { field: decision, yes: "Approve", no: "Reject" } } : {})}
          onSubmit={async (payload) => {
            await actions.submit({ ...target, payload });
            onDone();
          }}
          onCancel={async () => {
            await actions.cancel({ ...target, reason: "Cancelled by an operator." });
            onDone();
          }}
        />
      ) : (
        <p className="muted">
          A frontend-defined tool: its schema lives in the browser that defined it. Cancel it here, or answer
          it there.
        </p>
      )}
    </li>
  );
}

/** Every pending action in the caller's scope, across threads (`actions.list`), answerable in place. */
export function OperatorView(): ReactNode {
  const { value, error, reload } = usePolled(loadPending, 2_000);
  const items = value?.items ?? [];
  return (
    <div className="operator">
      <h2>Pending actions across all threads</h2>
      <p className="muted">
        What a support agent or back-office job sees: every suspended tool call waiting for an answer.
        Answering here resumes the run, whichever browser started it.
      </p>
      {error ? <div className="banner">Cannot reach the server: {error}</div> : null}
      {value && items.length === 0 ? <p data-testid="operator-empty">Nothing is waiting.</p> : null}
      <ul className="operator-list">
        {items.map((action) => (
          <OperatorAction
            key={`${action.threadId}-${action.actionId}`}
            action={action}
            onDone={() => void reload()}
          />
        ))}
      </ul>
    </div>
  );
}

/** What the waiting tool showed, as labelled fields instead of raw JSON. */
function InputPreview({ value }: { value: unknown }): ReactNode {
  if (value === null || typeof value !== "object" || Array.isArray(value)) {
    return <p data-testid="operator-preview">{readable(value)}</p>;
  }
  return (
    <dl className="preview" data-testid="operator-preview">
      {Object.entries(value).map(([key, field]) => (
        <div key={key}>
          <dt>{humanize(key)}</dt>
          <dd>{readable(field)}</dd>
        </div>
      ))}
    </dl>
  );
}

function humanize(key: string): string {
  const words = key.replace(/([a-z])([A-Z])/g, "$1 $2").replace(/[_-]+/g, " ");
  return words.charAt(0).toUpperCase() + words.slice(1);
}

function readable(value: unknown): string {
  if (value === null || value === undefined) return "—";
  if (Array.isArray(value)) return value.map(readable).join(" · ");
  if (typeof value === "object") {
    return Object.entries(value as Record<string, unknown>)
      .map(([key, field]) => `${humanize(key)}: ${readable(field)}`)
      .join(", ");
  }
  if (typeof value === "boolean") return value ? "Yes" : "No";
  return String(value);
}
