import { type FormEvent, type ReactNode, useCallback, useEffect, useState } from "react";
import { ChatPage, NewChat } from "./chat-page.js";
import { queueFirstMessage, ThreadView } from "./conversation.js";
import { OperatorView, usePolled } from "./operator-view.js";
import { paiClient, trpc } from "./pai.js";
import { ToolRenderers } from "./tool-renderers.js";

type Route =
  | { view: "new" }
  | { view: "thread"; threadId: string }
  | { view: "operator" }
  | { view: "chat"; threadId: string | null };

function parseRoute(hash: string): Route {
  const thread = /^#\/t\/(.+)$/.exec(hash);
  if (thread) return { view: "thread", threadId: decodeURIComponent(thread[1]) };
  const chat = /^#\/chat(?:\/(.+))?$/.exec(hash);
  if (chat) return { view: "chat", threadId: chat[1] ? decodeURIComponent(chat[1]) : null };
  if (hash === "#/operator") return { view: "operator" };
  return { view: "new" };
}

function useRoute(): Route {
  const [route, setRoute] = useState(() => parseRoute(location.hash));
  useEffect(() => {
    const onChange = () => setRoute(parseRoute(location.hash));
    window.addEventListener("hashchange", onChange);
    return () => window.removeEventListener("hashchange", onChange);
  }, []);
  return route;
}

const USERS = ["demo", "alice", "admin"];

function currentUser(): string {
  return /(?:^|;\s*)pai_user=([^;]+)/.exec(document.cookie)?.[1] ?? "demo";
}

function UserSwitcher(): ReactNode {
  const user = currentUser();
  return (
    <label className="user">
      User{" "}
      <select
        value={user}
        data-testid="user"
        onChange={(event) => {
          // biome-ignore lint/suspicious/noDocumentCookie: a plain cookie the server reads; no Cookie Store API needed.
          document.cookie = `pai_user=${event.target.value}; path=/; SameSite=Lax`;
          location.reload();
        }}
      >
        {USERS.map((name) => (
          <option key={name} value={name}>
            {name}
          </option>
        ))}
      </select>
    </label>
  );
}

function NewConversation(): ReactNode {
  const [text, setText] = useState("");
  const [error, setError] = useState<string | null>(null);
  const start = async (message: string) => {
    setError(null);
    try {
      const thread = await paiClient.createThread({ agentId: "main", title: message.slice(0, 60) });
      queueFirstMessage(thread.id, message);
      location.hash = `#/t/${thread.id}`;
    } catch (caught) {
      setError((caught as Error).message);
    }
  };
  const submit = (event: FormEvent) => {
    event.preventDefault();
    if (text.trim()) void start(text.trim());
  };
  const examples = [
    "approve the launch",
    "write a report about churn",
    "deploy billing",
    "what did I select?",
    "what is my browser time zone?",
    "export orders as csv",
    "admin stats",
  ];
  return (
    <div className="new-conversation">
      <h2>Start a conversation</h2>
      <p className="muted">
        The demo model is deterministic: it recognizes a few requests and calls a demo tool for each. Every
        wait point is durable; restart the server and carry on.
      </p>
      <ul className="examples">
        {examples.map((example) => (
          <li key={example}>
            <button type="button" className="chip" onClick={() => void start(example)}>
              {example}
            </button>
          </li>
        ))}
      </ul>
      <form className="composer" onSubmit={submit}>
        <textarea
          value={text}
          rows={2}
          placeholder="Ask something..."
          data-testid="new-composer"
          onChange={(event) => setText(event.target.value)}
          onKeyDown={(event) => {
            if (event.key === "Enter" && !event.shiftKey) {
              event.preventDefault();
              if (text.trim()) void start(text.trim());
            }
          }}
        />
        <button type="submit" data-testid="new-send">
          Start
        </button>
      </form>
      {error ? (
        <p className="form-error" role="alert">
          {error}
        </p>
      ) : null}
    </div>
  );
}

function Sidebar({ route }: { route: Route }): ReactNode {
  const load = useCallback(() => paiClient.listThreads({ agentId: "main", limit: 50 }), []);
  const { value, error } = usePolled(load, 2_500);
  const active = route.view === "thread" ? route.threadId : null;
  return (
    <nav className="sidebar">
      <a className={`nav-item ${route.view === "new" ? "active" : ""}`} href="#/" data-testid="nav-new">
        + New conversation
      </a>
      <a
        className={`nav-item ${route.view === "operator" ? "active" : ""}`}
        href="#/operator"
        data-testid="nav-operator"
      >
        Operator inbox
      </a>
      <a
        className={`nav-item ${route.view === "chat" ? "active" : ""}`}
        href="#/chat"
        data-testid="nav-usechat"
      >
        useChat (AI SDK)
      </a>
      <h3>Threads</h3>
      {error ? <p className="banner small">Server unreachable, retrying...</p> : null}
      <ul className="thread-list" data-testid="thread-list">
        {(value?.items ?? []).map((thread) => (
          <li key={thread.threadId}>
            <a
              className={`nav-item ${thread.threadId === active ? "active" : ""}`}
              href={`#/t/${thread.threadId}`}
              title={thread.title ?? thread.threadId}
            >
              <span className={`dot status-${thread.status}`} />
              {thread.title ?? thread.threadId}
            </a>
          </li>
        ))}
      </ul>
    </nav>
  );
}

const checkHealth = () => trpc.health.query();

/**
 * A banner while the server is unreachable. Thread watches reconnect on their own (and resume
 * after the last version they saw); this only tells the user why nothing moves meanwhile.
 */
function ServerStatus(): ReactNode {
  const { error } = usePolled(checkHealth, 1_000);
  if (!error) return null;
  return (
    <div className="banner server-down" data-testid="reconnecting">
      The server is unreachable. Reconnecting... Threads and pending actions are stored on the server and will
      be back.
    </div>
  );
}

export function App(): ReactNode {
  const route = useRoute();
  return (
    <div className="app">
      <ToolRenderers />
      <ServerStatus />
      <header className="topbar">
        <h1>
          PAI <span>playground</span>
        </h1>
        <UserSwitcher />
      </header>
      <Sidebar route={route} />
      <main className="main">
        {route.view === "thread" ? <ThreadView key={route.threadId} threadId={route.threadId} /> : null}
        {route.view === "operator" ? <OperatorView /> : null}
        {route.view === "new" ? <NewConversation /> : null}
        {route.view === "chat" && route.threadId ? (
          <ChatPage key={route.threadId} threadId={route.threadId} />
        ) : null}
        {route.view === "chat" && !route.threadId ? <NewChat /> : null}
      </main>
    </div>
  );
}
