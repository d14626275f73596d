import { useChat } from "@ai-sdk/react";
import { PaiChatTransport, type PaiUIMessage } from "@pai/ai-sdk";
import {
  lastAssistantMessageIsCompleteWithApprovalResponses,
  lastAssistantMessageIsCompleteWithToolCalls,
  validateUIMessages,
} from "ai";
import { type FormEvent, type ReactNode, useEffect, useState } from "react";
import type { PlaygroundAgent } from "../../server/agent.js";
import { type CountdownDeadline, DeadlineCountdown } from "./deadline-countdown.js";
import { paiClient } from "./pai.js";
import { lastSelection } from "./selection.js";

/**
 * The same agent behind the stock `useChat` of `@ai-sdk/react` and PAI's `ChatTransport`: no
 * PAI React bindings, only the AI SDK's message parts. The thread id is the chat id.
 */
type Message = PaiUIMessage<PlaygroundAgent>;
type Part = Message["parts"][number];

const transport = new PaiChatTransport<Message>({ api: "/api/chat", credentials: "same-origin" });

/** One thread per visit of `#/chat`, even when an effect runs twice (React's StrictMode in development). */
let creating: Promise<{ id: string }> | null = null;

/** `#/chat` creates a thread and moves to `#/chat/<threadId>`. */
export function NewChat(): ReactNode {
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    creating ??= paiClient.createThread({ agentId: "main", title: "useChat" });
    creating
      .then((thread) => {
        creating = null;
        location.hash = `#/chat/${thread.id}`;
      })
      .catch((caught: Error) => {
        creating = null;
        setError(caught.message);
      });
  }, []);
  return error ? <p role="alert">{error}</p> : <p className="muted">Creating a thread…</p>;
}

export function ChatPage({ threadId }: { threadId: string }): ReactNode {
  const [initial, setInitial] = useState<Message[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    setInitial(null);
    transport.loadMessages(threadId).then(setInitial, (caught: Error) => setError(caught.message));
  }, [threadId]);
  if (error) return <p role="alert">{error}</p>;
  if (!initial) return <p className="muted">Loading…</p>;
  return <ChatThread key={threadId} threadId={threadId} initial={initial} />;
}

function ChatThread({ threadId, initial }: { threadId: string; initial: Message[] }): ReactNode {
  const chat = useChat<Message>({
    id: threadId,
    messages: initial,
    transport,
    resume: true,
    sendAutomaticallyWhen: (options) =>
      lastAssistantMessageIsCompleteWithToolCalls(options) ||
      lastAssistantMessageIsCompleteWithApprovalResponses(options),
  });
  const [text, setText] = useState("");
  const [valid, setValid] = useState("checking");
  useEffect(() => {
    // Every message list the page holds must be one the AI SDK itself accepts.
    // Sticky: one invalid list stays reported even if a later one is valid again.
    validateUIMessages({ messages: chat.messages }).then(
      () => setValid((previous) => (previous.startsWith("invalid") ? previous : "valid")),
      (caught: Error) => setValid(`invalid: ${caught.message}`),
    );
  }, [chat.messages]);
  const submit = (event: FormEvent) => {
    event.preventDefault();
    if (!text.trim()) return;
    void chat.sendMessage({ text: text.trim() });
    setText("");
  };
  return (
    <div className="conversation usechat" data-testid="usechat">
      <p className="muted">
        Stock <code>useChat</code> from <code>@ai-sdk/react</code> on PAI&apos;s chat transport · status{" "}
        <span data-testid="chat-status">{chat.status}</span> · messages{" "}
        <span data-testid="chat-valid">{valid}</span>
      </p>
      <div className="messages">
        {chat.messages.map((message) => (
          <div key={message.id} className={`message ${message.role}`} data-testid={`chat-${message.role}`}>
            {message.parts.map((part, index) => (
              // biome-ignore lint/suspicious/noArrayIndexKey: parts have no ids and are only ever appended or updated in place.
              <ChatPart key={`${message.id}:${index}`} part={part} chat={chat} threadId={threadId} />
            ))}
          </div>
        ))}
      </div>
      {chat.error ? (
        <p className="form-error" role="alert" data-testid="chat-error">
          {chat.error.message}{" "}
          <button type="button" onClick={() => chat.clearError()}>
            Dismiss
          </button>
        </p>
      ) : null}
      <form className="composer" onSubmit={submit}>
        <textarea
          value={text}
          rows={2}
          placeholder="Ask something..."
          data-testid="chat-composer"
          onChange={(event) => setText(event.target.value)}
        />
        <button type="submit" data-testid="chat-send" disabled={chat.status === "streaming"}>
          Send
        </button>
      </form>
    </div>
  );
}

type Chat = ReturnType<typeof useChat<Message>>;

function ChatPart({ part, chat, threadId }: { part: Part; chat: Chat; threadId: string }): ReactNode {
  switch (part.type) {
    case "text":
      return <p className="text">{part.text}</p>;
    case "data-progress":
      return (
        <div className="progress" data-testid="chat-progress" data-pct={part.data.pct}>
          <div className="progress-fill" style={{ width: `${Math.round(part.data.pct * 100)}%` }} />
          <span>{part.data.label}</span>
        </div>
      );
    case "data-pai-action":
      return <ActionForm data={part.data} chat={chat} threadId={threadId} />;
    case "tool-requestApproval":
      if (part.state === "approval-requested") {
        return (
          <div className="tool-card state-waiting" data-testid="chat-approval">
            <p>{part.input.summary}</p>
            <ApprovalDeadline threadId={threadId} actionId={part.approval.id} />
            <button
              type="button"
              onClick={() => chat.addToolApprovalResponse({ id: part.approval.id, approved: true })}
            >
              Approve
            </button>{" "}
            <button
              type="button"
              onClick={() =>
                chat.addToolApprovalResponse({ id: part.approval.id, approved: false, reason: "Not now." })
              }
            >
              Reject
            </button>
          </div>
        );
      }
      if (part.state === "output-available") {
        return (
          <p className="tool-card state-done" data-testid="chat-approval-result">
            {part.output.approved ? "Approved" : "Rejected"}
          </p>
        );
      }
      return <ToolState part={part} />;
    case "tool-getSelectedText":
      if (part.state === "input-available") {
        return (
          <div className="tool-card state-waiting" data-testid="chat-client-tool">
            <p>The agent asks for your selected text.</p>
            <button
              type="button"
              onClick={() =>
                chat.addToolOutput({
                  tool: "getSelectedText",
                  toolCallId: part.toolCallId,
                  output: { text: lastSelection() || "(nothing selected)" },
                })
              }
            >
              Send selection
            </button>
          </div>
        );
      }
      return <ToolState part={part} />;
    default:
      if (part.type.startsWith("tool-"))
        return <ToolState part={part as Extract<Part, { toolCallId: string }>} />;
      return null;
  }
}

/**
 * The AI SDK's approval request has no field for a deadline, so the page reads the action's
 * deadline once from PAI's thread state (the approval id is the action id).
 */
function ApprovalDeadline({ threadId, actionId }: { threadId: string; actionId: string }): ReactNode {
  const [deadline, setDeadline] = useState<CountdownDeadline | null>(null);
  useEffect(() => {
    let current = true;
    paiClient
      .thread(threadId)
      .refresh()
      .then(
        (state) => {
          const action = state.pending.find((candidate) => candidate.ref.actionId === actionId);
          if (current) setDeadline(action?.deadline ?? null);
        },
        // Without it the approval still works; only the countdown is missing.
        () => undefined,
      );
    return () => {
      current = false;
    };
  }, [threadId, actionId]);
  return <DeadlineCountdown deadline={deadline} />;
}

function ToolState({ part }: { part: Extract<Part, { toolCallId: string }> }): ReactNode {
  const label =
    part.state === "output-available" ? "done" : part.state === "output-error" ? "error" : part.state;
  return (
    <p className={`tool-card state-${label}`} data-testid={`chat-${part.type}`} data-state={part.state}>
      {part.type.slice("tool-".length)} · {label}
      {part.state === "output-error" ? `: ${part.errorText}` : ""}
    </p>
  );
}

/** A suspend point that is not an approval: a JSON answer through the transport, then the run resumes. */
function ActionForm({
  data,
  chat,
  threadId,
}: {
  data: Extract<Part, { type: "data-pai-action" }>["data"];
  chat: Chat;
  threadId: string;
}): ReactNode {
  const [payload, setPayload] = useState("{}");
  const [error, setError] = useState<string | null>(null);
  if (data.state !== "pending")
    return (
      <p className="muted">
        {data.name}: {data.state}
      </p>
    );
  const answer = async () => {
    setError(null);
    try {
      await transport.submit(threadId, {
        actionId: data.actionId,
        name: data.name,
        payload: JSON.parse(payload),
      });
      await chat.resumeStream();
    } catch (caught) {
      setError((caught as Error).message);
    }
  };
  return (
    <div className="tool-card state-waiting" data-testid={`chat-action-${data.name}`}>
      <p>{data.name}</p>
      <DeadlineCountdown deadline={data.deadline} />
      <pre className="muted">{JSON.stringify(data.input, null, 2)}</pre>
      <textarea value={payload} rows={3} onChange={(event) => setPayload(event.target.value)} />
      <button type="button" onClick={() => void answer()}>
        Submit
      </button>
      {error ? <p role="alert">{error}</p> : null}
    </div>
  );
}
