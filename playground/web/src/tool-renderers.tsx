import type { ProjectedMessage } from "@pai/core/protocol";
import type { ToolRenderState } from "@pai/react";
import type { ReactNode } from "react";
import { type CountdownDeadline, DeadlineCountdown } from "./deadline-countdown.js";
import { isInterrupted } from "./interrupted.js";
import { answerSchema, useManifest } from "./manifest.js";
import { Main } from "./pai.js";
import { type FieldSchema, SchemaForm } from "./schema-form.js";
import { ToolFailure } from "./tool-failure.js";

type AnyAction = {
  name: string;
  ref: { actionId: string };
  origin: { toolName: string; suspendName?: string };
  deadline: CountdownDeadline | null;
  submit(payload: never): Promise<unknown>;
  cancel(input?: { reason?: string }): Promise<unknown>;
};

const STATE_LABEL: Record<ToolRenderState, string> = {
  streaming: "preparing",
  waiting: "waiting for you",
  running: "running",
  done: "done",
  error: "failed",
  cancelled: "cancelled",
};

/** The frame every tool part is drawn in: tool name, derived state, body, then what went wrong. */
export function ToolCard(props: {
  toolName: string;
  state: ToolRenderState;
  title?: string;
  errorText: string | undefined;
  message: ProjectedMessage;
  children?: ReactNode;
}): ReactNode {
  const interrupted = isInterrupted(props.state, props.errorText);
  return (
    <section
      className={`tool-card state-${props.state}`}
      data-testid={`tool-${props.toolName}`}
      data-state={props.state}
      data-interrupted={interrupted || undefined}
    >
      <header>
        <span className="tool-name">{props.title ?? props.toolName}</span>
        <span className={`badge badge-${props.state}`} data-testid="tool-badge">
          {interrupted ? "interrupted" : STATE_LABEL[props.state]}
        </span>
      </header>
      {props.children}
      <ToolFailure
        toolName={props.toolName}
        state={props.state}
        errorText={props.errorText}
        message={props.message}
      />
    </section>
  );
}

/** A pending action answered with a form generated from the manifest's JSON Schema. */
export function ActionForm(props: {
  action: AnyAction;
  decision?: { field: string; yes: string; no: string };
  submitLabel?: string;
}): ReactNode {
  const manifest = useManifest();
  const { state } = Main.useThread();
  const { action } = props;
  const schema = answerSchema(manifest, action.origin.toolName, action.origin.suspendName);
  if (!schema) return <p className="muted">Loading the form...</p>;
  return (
    <>
      <DeadlineCountdown deadline={action.deadline} />
      <SchemaForm
        // A new wait (even at the same suspend point) is a new form; a restart keeps the action id.
        key={action.ref.actionId}
        schema={schema}
        testId={`form-${action.name}`}
        staleAfter={state.version}
        {...(props.decision ? { decision: props.decision } : {})}
        {...(props.submitLabel ? { submitLabel: props.submitLabel } : {})}
        onSubmit={(payload) => action.submit(payload as never)}
        onCancel={() => action.cancel({ reason: "Cancelled from the playground UI." })}
      />
    </>
  );
}

const REPORT_STEPS = ["collectDetails", "approveDraft", "attachReferenceFile"] as const;

/** Registers a renderer for every demo tool while mounted (provider-wide). */
export function ToolRenderers(): null {
  Main.useToolRenderer("requestApproval", ({ state, input, output, action, errorText, message }) => (
    <ToolCard
      toolName="requestApproval"
      state={state}
      errorText={errorText}
      message={message}
      title="Approval"
    >
      <p className="prompt">{input?.summary}</p>
      {state === "waiting" ? (
        <ActionForm action={action} decision={{ field: "approved", yes: "Approve", no: "Reject" }} />
      ) : null}
      {state === "done" ? (
        <p className={output.approved ? "ok" : "warn"} data-testid="approval-result">
          {output.approved ? "Approved" : "Rejected"}
          {output.comment ? `: ${output.comment}` : ""}
        </p>
      ) : null}
    </ToolCard>
  ));

  Main.useToolRenderer("draftReport", ({ state, input, output, action, data, errorText, message }) => {
    const stage = data.stage.records.at(-1)?.value.label;
    const step = action
      ? REPORT_STEPS.indexOf(action.origin.suspendName as (typeof REPORT_STEPS)[number])
      : -1;
    return (
      <ToolCard
        toolName="draftReport"
        state={state}
        errorText={errorText}
        message={message}
        title={`Report: ${input?.topic ?? ""}`}
      >
        {stage ? <p className="muted">{stage}</p> : null}
        {state === "waiting" && action ? (
          <div className="report-step" data-step={action.origin.suspendName}>
            <p className="step">Step {step + 1} of 3</p>
            {action.name === "draftReport.collectDetails" ? (
              <p className="prompt">{action.input.prompt}</p>
            ) : null}
            {action.name === "draftReport.approveDraft" ? (
              <div className="draft">
                <strong>{action.input.title}</strong>
                <ol>
                  {action.input.outline.map((line) => (
                    <li key={line}>{line}</li>
                  ))}
                </ol>
              </div>
            ) : null}
            {action.name === "draftReport.attachReferenceFile" ? (
              <p className="prompt">{action.input.hint}</p>
            ) : null}
            <ActionForm
              action={action}
              {...(action.name === "draftReport.approveDraft"
                ? { decision: { field: "approved", yes: "Approve draft", no: "Reject draft" } }
                : { submitLabel: "Continue" })}
            />
          </div>
        ) : null}
        {state === "done" ? (
          output.status === "published" ? (
            <p className="ok" data-testid="report-result">
              Published {output.reportId} for {output.audience} ({output.sections} sections), reference{" "}
              <a href={output.reference.url} target="_blank" rel="noreferrer">
                {output.reference.title}
              </a>
            </p>
          ) : (
            <p className="warn" data-testid="report-result">
              Draft rejected{output.comment ? `: ${output.comment}` : ""}
            </p>
          )
        ) : null}
      </ToolCard>
    );
  });

  Main.useToolRenderer("deployService", ({ state, input, output, data, errorText, message }) => {
    const progress = data.progress.records.at(-1)?.value;
    const pct = Math.round((state === "done" ? 1 : (progress?.pct ?? 0)) * 100);
    return (
      <ToolCard
        toolName="deployService"
        state={state}
        errorText={errorText}
        message={message}
        title={`Deploy ${input?.service ?? ""}`}
      >
        <div
          className="progress"
          role="progressbar"
          aria-valuemin={0}
          aria-valuemax={100}
          aria-valuenow={pct}
          data-testid="deploy-progress"
        >
          <div className="progress-fill" style={{ width: `${pct}%` }} />
        </div>
        <p className="muted">
          {progress?.label ?? "Queued"} - {pct}%
        </p>
        {state === "done" ? (
          <p className="ok">
            Live at <a href={output.url}>{output.url}</a>
          </p>
        ) : null}
      </ToolCard>
    );
  });

  Main.useToolRenderer("getSelectedText", ({ state, output, action, errorText, message }) => (
    <ToolCard
      toolName="getSelectedText"
      state={state}
      errorText={errorText}
      message={message}
      title="Your selection"
    >
      {state === "waiting" && action ? (
        <>
          <p className="prompt">
            Nothing was selected. Select text in the conversation and ask again, or type it here:
          </p>
          <ActionForm action={action} submitLabel="Send text" />
        </>
      ) : null}
      {state === "done" ? <blockquote data-testid="selection-result">{output.text}</blockquote> : null}
    </ToolCard>
  ));

  Main.useToolRenderer("getBrowserInfo", ({ state, output, errorText, message }) => (
    <ToolCard
      toolName="getBrowserInfo"
      state={state}
      errorText={errorText}
      message={message}
      title="Browser info (frontend tool)"
    >
      {state === "done" && output ? (
        <dl className="facts" data-testid="browser-info">
          <dt>Language</dt>
          <dd>{output.language}</dd>
          <dt>Time zone</dt>
          <dd>{output.timeZone}</dd>
          <dt>Local time</dt>
          <dd>{output.localTime}</dd>
        </dl>
      ) : state === "waiting" || state === "running" ? (
        <p className="muted">Asking this browser...</p>
      ) : null}
    </ToolCard>
  ));

  Main.useToolRenderer("exportCsv", ({ state, input, output, errorText, message }) => (
    <ToolCard
      toolName="exportCsv"
      state={state}
      errorText={errorText}
      message={message}
      title={`Export ${input?.dataset ?? ""} as CSV`}
    >
      {state === "done" ? (
        <p>
          <a
            className="download"
            href={`/files/${output.fileId}`}
            download={output.filename}
            data-testid="csv-download"
          >
            Download {output.filename}
          </a>{" "}
          <span className="muted">
            {output.rows} rows, {output.bytes} bytes
          </span>
        </p>
      ) : null}
    </ToolCard>
  ));

  Main.useToolRenderer("runShell", ({ state, input, output, errorText, message }) => (
    <ToolCard
      toolName="runShell"
      state={state}
      errorText={errorText}
      message={message}
      title="Sandbox shell (@pai/sandbox)"
    >
      <pre className="terminal" data-testid="shell-output">
        $ {input?.command}
        {state === "done" ? `\n${output.stdout}${output.stderr ? `\n${output.stderr}` : ""}` : ""}
      </pre>
      {state === "done" ? <p className="muted">exit code {output.exitCode}</p> : null}
    </ToolCard>
  ));

  Main.useToolRenderer("runCode", ({ state, input, output, errorText, message }) => (
    <ToolCard
      toolName="runCode"
      state={state}
      errorText={errorText}
      message={message}
      title="Code mode (@pai/code-mode)"
    >
      <pre>{input?.code}</pre>
      {state === "done" ? (
        <>
          {output.logs.length > 0 ? <pre className="terminal">{output.logs.join("\n")}</pre> : null}
          <p className="ok" data-testid="code-result">
            Result: {JSON.stringify(output.result)}
          </p>
        </>
      ) : null}
    </ToolCard>
  ));

  Main.useToolRenderer("adminStats", ({ state, output, errorText, message }) => (
    <ToolCard
      toolName="adminStats"
      state={state}
      errorText={errorText}
      message={message}
      title="Server statistics (admin only)"
    >
      {state === "done" ? (
        <dl className="facts">
          <dt>Uptime</dt>
          <dd>{output.uptimeSeconds}s</dd>
          <dt>Node</dt>
          <dd>{output.node}</dd>
          <dt>Heap</dt>
          <dd>{output.heapMb} MB</dd>
        </dl>
      ) : null}
    </ToolCard>
  ));

  return null;
}

/** Fallback for a tool without a registered renderer: its state and raw input/output. */
export function GenericTool(props: {
  toolName: string;
  state: ToolRenderState;
  input: unknown;
  output: unknown;
  errorText: string | undefined;
  message: ProjectedMessage;
}): ReactNode {
  return (
    <ToolCard
      toolName={props.toolName}
      state={props.state}
      errorText={props.errorText}
      message={props.message}
    >
      <pre>{JSON.stringify({ input: props.input, output: props.output }, null, 2)}</pre>
    </ToolCard>
  );
}

export type { FieldSchema };
