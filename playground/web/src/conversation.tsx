import type { ProjectedMessage, ProjectedPart } from "@pai/core/protocol";
import { type FormEvent, type ReactNode, useEffect, useRef, useState } from "react";
import { Main, Pai } from "./pai.js";
import { GenericTool } from "./tool-renderers.js";

/** First messages of threads created from the "new conversation" composer, sent once the thread view mounts. */
const outbox = new Map<string, string>();

export function queueFirstMessage(threadId: string, text: string): void {
  outbox.set(threadId, text);
}

function isToolPart(part: ProjectedPart): boolean {
  return part.type === "dynamic-tool" || part.type.startsWith("tool-");
}

function MessageParts({ message, live }: { message: ProjectedMessage; live: string | undefined }): ReactNode {
  return (
    <>
      {message.parts.map((part, index) => {
        const key = `${message.id}-${index}`;
        if (part.type === "text") {
          return (
            <p className="text" key={key}>
              {(part as { text: string }).text}
            </p>
          );
        }
        if (isToolPart(part)) {
          return (
            <Pai.ToolPart
              key={key}
              message={message}
              part={part}
              fallback={(props) => (
                <GenericTool
                  toolName={props.toolName}
                  state={props.state}
                  input={props.input}
                  output={props.output}
                  errorText={props.errorText}
                  message={props.message}
                />
              )}
            />
          );
        }
        return null;
      })}
      {live ? (
        <p className="text live" data-testid="live-text">
          {live}
          <span className="cursor" />
        </p>
      ) : null}
    </>
  );
}

const RUN_LABEL: Record<string, string> = {
  running: "The agent is working...",
  waiting: "Waiting for your answer.",
  failed: "The run failed.",
  cancelled: "The run was cancelled.",
};

/** One thread: messages with streaming text, tool parts through the registered renderers, and a composer. */
export function Conversation(): ReactNode {
  const thread = Main.useThread();
  const { state } = thread;
  const [draft, setDraft] = useState("");
  const [error, setError] = useState<string | null>(null);
  const [blockedByPending, setBlockedByPending] = useState(false);
  const bottom = useRef<HTMLDivElement>(null);

  const send = async (text: string, cancelPending = false) => {
    setError(null);
    setBlockedByPending(false);
    try {
      await thread.send(text, cancelPending ? { cancelPending: true } : {});
      setDraft("");
    } catch (caught) {
      setDraft(text);
      setError((caught as Error).message);
      setBlockedByPending((caught as { code?: string }).code === "CONFLICT" || thread.pending.length > 0);
    }
  };

  // A thread created by the "new conversation" composer sends its first message from here, so
  // the request carries this provider's frontend tools like every other send.
  useEffect(() => {
    const first = outbox.get(thread.id);
    if (first === undefined || state.status !== "ready") return;
    outbox.delete(thread.id);
    void send(first);
  });

  // "Reconnecting" only after a connection was open: the first connect of a new thread is not a loss.
  const [wasOpen, setWasOpen] = useState(false);
  useEffect(() => {
    if (state.connection === "open") setWasOpen(true);
  }, [state.connection]);

  // A request error describes the state it was made on; once the thread moves on, it is stale.
  // biome-ignore lint/correctness/useExhaustiveDependencies: clear on every new version only.
  useEffect(() => {
    setError(null);
    setBlockedByPending(false);
  }, [state.version]);

  const lastVersion = state.version;
  const liveLength = state.live.reduce((total, entry) => total + entry.text.length, 0);
  // biome-ignore lint/correctness/useExhaustiveDependencies: scroll when new content arrives.
  useEffect(() => {
    bottom.current?.scrollIntoView({ block: "end" });
  }, [lastVersion, liveLength]);

  const known = new Set(state.messages.map((message) => message.id));
  const orphanLive = state.live.filter((entry) => !known.has(entry.messageId) && entry.text);
  const submit = (event: FormEvent) => {
    event.preventDefault();
    if (draft.trim()) void send(draft.trim());
  };
  const runStatus = state.run?.status;

  return (
    <div className="conversation">
      {state.status === "error" || (wasOpen && state.connection !== "open" && state.status !== "idle") ? (
        <div className="banner" data-testid="thread-connection">
          {state.status === "error"
            ? `Cannot load this thread: ${state.error?.message}`
            : "Reconnecting to the server..."}
        </div>
      ) : null}
      <div className="messages" data-selectable data-testid="messages">
        {state.messages.length === 0 && state.status === "ready" && orphanLive.length === 0 ? (
          <p className="muted empty">No messages yet.</p>
        ) : null}
        {state.messages.map((message) => (
          <article
            key={message.id}
            className={`message ${message.role}`}
            data-testid={`message-${message.role}`}
          >
            <MessageParts
              message={message}
              live={state.live.find((entry) => entry.messageId === message.id)?.text}
            />
          </article>
        ))}
        {orphanLive.map((entry) => (
          <article key={entry.messageId} className="message assistant" data-testid="message-assistant">
            <p className="text live" data-testid="live-text">
              {entry.text}
              <span className="cursor" />
            </p>
          </article>
        ))}
        <div ref={bottom} />
      </div>
      <div className="run-status" data-testid="run-status" data-status={runStatus ?? "none"}>
        {runStatus === "failed" && state.run?.error
          ? `The run failed: ${state.run.error}`
          : runStatus
            ? RUN_LABEL[runStatus]
            : null}
      </div>
      <form className="composer" onSubmit={submit}>
        <textarea
          value={draft}
          placeholder='Try "approve the launch", "write a report about churn", "deploy billing", "export orders as csv"'
          rows={2}
          data-testid="composer"
          onChange={(event) => setDraft(event.target.value)}
          onKeyDown={(event) => {
            if (event.key === "Enter" && !event.shiftKey) {
              event.preventDefault();
              if (draft.trim()) void send(draft.trim());
            }
          }}
        />
        <button type="submit" data-testid="send">
          Send
        </button>
      </form>
      {error ? (
        <div className="form-error" role="alert">
          {error}
          {blockedByPending ? (
            <button type="button" className="link" onClick={() => void send(draft.trim(), true)}>
              Cancel the pending actions and send
            </button>
          ) : null}
        </div>
      ) : null}
    </div>
  );
}

/** A thread view: scopes the subtree to the thread (watch, client tools) and shows the conversation. */
export function ThreadView({ threadId }: { threadId: string }): ReactNode {
  return (
    <Pai.ThreadProvider threadId={threadId}>
      <Conversation />
    </Pai.ThreadProvider>
  );
}
