import type { PaiThreadMessage } from "@pai/client";
import { type FormEvent, type ReactNode, useCallback, useEffect, useState } from "react";
import { Assistant, Pai, paiClient } from "./pai.ts";

/** The thread in the URL hash (#<threadId>), or null; `open(null)` starts over. */
function useThreadId(): [string | null, (id: string | null) => void] {
  const read = () => decodeURIComponent(location.hash.slice(1)) || null;
  const [threadId, setThreadId] = useState(read);
  useEffect(() => {
    const onChange = () => setThreadId(read());
    window.addEventListener("hashchange", onChange);
    return () => window.removeEventListener("hashchange", onChange);
  }, []);
  const open = useCallback((id: string | null) => {
    location.hash = id ?? "";
  }, []);
  return [threadId, open];
}

// One request even when React runs the effect twice (StrictMode in development).
let creating: Promise<string> | null = null;
function createThreadId(): Promise<string> {
  creating ??= paiClient
    .createThread({ agentId: "main", title: "Conversation" })
    .then((thread) => thread.id)
    .finally(() => {
      creating = null;
    });
  return creating;
}

export function App(): ReactNode {
  const [threadId, open] = useThreadId();
  const [error, setError] = useState<string | null>(null);
  // Creates a thread on the first visit; its id stays in the URL, so a reload resumes it.
  useEffect(() => {
    if (threadId) return;
    createThreadId().then(open, (caught: Error) => setError(caught.message));
  }, [threadId, open]);

  return (
    <main className="app">
      <header>
        <h1>{document.title}</h1>
        <button type="button" className="secondary" onClick={() => open(null)}>
          New conversation
        </button>
      </header>
      {error ? <p className="error">{error}</p> : null}
      {threadId ? (
        <Pai.ThreadProvider key={threadId} threadId={threadId}>
          <Conversation />
        </Pai.ThreadProvider>
      ) : (
        <p className="muted">Starting a conversation...</p>
      )}
    </main>
  );
}

const STATUS: Record<string, string> = {
  running: "Working...",
  waiting: "Waiting for your answer.",
  failed: "The run failed.",
  cancelled: "Cancelled.",
};

function Conversation(): ReactNode {
  const thread = Assistant.useThread();
  const [draft, setDraft] = useState("");
  const [error, setError] = useState<string | null>(null);

  // How this page draws the approval tool: the prompt, and buttons while it waits.
  Assistant.useToolRenderer("requestApproval", ({ state, input, output, action }) => (
    <div className="card" data-state={state}>
      <p>
        <strong>Approval:</strong> {input?.summary ?? "..."}
      </p>
      {state === "waiting" ? (
        <p className="actions">
          <button type="button" onClick={() => void action.submit({ approved: true })}>
            Approve
          </button>
          <button type="button" className="secondary" onClick={() => void action.submit({ approved: false })}>
            Deny
          </button>
        </p>
      ) : null}
      {state === "done" ? <p className="muted">{output.approved ? "Approved" : "Denied"}</p> : null}
    </div>
  ));
  Assistant.useToolRenderer("getLocalTime", ({ state, output }) => (
    <div className="card" data-state={state}>
      {state === "done"
        ? `Your browser answered: ${output.time} (${output.timeZone})`
        : "Asking your browser..."}
    </div>
  ));

  const send = async (event: FormEvent) => {
    event.preventDefault();
    const text = draft.trim();
    if (!text) return;
    setError(null);
    try {
      await thread.send(text);
      setDraft("");
    } catch (caught) {
      setError((caught as Error).message);
    }
  };
  const status = thread.state.run?.status;

  return (
    <section className="conversation">
      {thread.messages.length === 0 ? (
        <p className="muted">Ask for something, e.g. "send the launch email", or "what time is it?"</p>
      ) : null}
      {thread.messages.map((message) => (
        <Message key={message.id} message={message} />
      ))}
      {thread.state.live.map((live) => (
        <p key={live.messageId} className="message assistant live">
          {live.text}
        </p>
      ))}
      <p className="muted status">{status ? STATUS[status] : null}</p>
      <form className="composer" onSubmit={send}>
        <input value={draft} placeholder="Message" onChange={(event) => setDraft(event.target.value)} />
        <button type="submit">Send</button>
      </form>
      {error ? <p className="error">{error}</p> : null}
    </section>
  );
}

function Message({ message }: { message: PaiThreadMessage }): ReactNode {
  return (
    <div className={`message ${message.role}`}>
      {message.parts.map((part, index) => {
        const key = `${message.id}-${index}`;
        if (part.type === "text") return <p key={key}>{part.text}</p>;
        if (part.type.startsWith("tool-") || part.type === "dynamic-tool") {
          return <Pai.ToolPart key={key} message={message} part={part} />;
        }
        return null;
      })}
    </div>
  );
}
