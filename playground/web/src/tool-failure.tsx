import type { ProjectedMessage } from "@pai/core/protocol";
import type { ToolRenderState } from "@pai/react";
import { type ReactNode, useEffect, useState } from "react";
import { canRetry, retryTurn } from "./interrupted.js";
import { Main } from "./pai.js";

const ACTIVE_RUN = new Set(["queued", "running", "waiting"]);

/** A failed call's error text; for an interrupted call of a retryable tool, a way to try again. */
export function ToolFailure(props: {
  toolName: string;
  state: ToolRenderState;
  errorText: string | undefined;
  message: ProjectedMessage | undefined;
}): ReactNode {
  if (!props.errorText) return null;
  return (
    <>
      <p className="tool-error">{props.errorText}</p>
      {props.message && canRetry(props.toolName, props.state, props.errorText) ? (
        <RetryTurn message={props.message} />
      ) : null}
    </>
  );
}

/**
 * PAI never re-runs a call, and has no retry command: "Retry" sends the user's turn that led to
 * the call again, so the model calls the tool anew in a new run. Offered until the user speaks
 * again; its failure message lasts until the thread moves on.
 */
function RetryTurn({ message }: { message: ProjectedMessage }): ReactNode {
  const thread = Main.useThread();
  const { state } = thread;
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  // Same rule as the composer: a failed request describes the state it was made on.
  // biome-ignore lint/correctness/useExhaustiveDependencies: clear on every new version only.
  useEffect(() => {
    setError(null);
  }, [state.version]);

  const turn = retryTurn(state.messages, message.id);
  const retry = async (text: string) => {
    setError(null);
    setBusy(true);
    try {
      await thread.send(text);
    } catch (caught) {
      setError((caught as Error).message);
    } finally {
      setBusy(false);
    }
  };
  return (
    <div className="retry" data-testid="retry">
      {turn ? (
        <p className="muted">
          The server stopped while this was running.{" "}
          <button
            type="button"
            className="secondary"
            disabled={busy || ACTIVE_RUN.has(state.run?.status ?? "")}
            onClick={() => void retry(turn)}
          >
            Retry
          </button>{" "}
          sends &ldquo;{turn}&rdquo; again.
        </p>
      ) : null}
      {error ? (
        <p className="form-error" role="alert" data-testid="retry-error">
          Could not retry: {error}
        </p>
      ) : null}
    </div>
  );
}
