import type { JsonValue } from "../json/json-value.js";
import type { MessageRow } from "../state/rows.js";

/** A user message as a row; its position is set when a commit appends it. */
export function userMessageRow(
  threadId: string,
  message: { text: string; id?: string } | { id?: string; parts: unknown[] },
  generateId: () => string,
  now: string,
): MessageRow {
  const messageId = message.id ?? generateId();
  // A blank text part says nothing, and some providers refuse an empty text block: a stored one
  // would fail every later run of the thread. The service refuses a message of blank parts only.
  // Parts are rebuilt from the fields a user part may have: anything else a client put on them
  // (provider metadata, a tool state) would be stored and reach the provider's request.
  const parts =
    "text" in message
      ? [{ type: "text", text: message.text }]
      : message.parts.filter((part) => !isBlankTextPart(part)).map(userPart);
  return {
    threadId,
    messageId,
    position: 0,
    role: "user",
    message: { id: messageId, role: "user", parts: parts as never },
    runId: null,
    createdAt: now,
    updatedAt: now,
  };
}

/**
 * A trusted notification (a trigger, a schedule's firing) as the user-role message the model
 * reads: its text, then its data as JSON; marked in metadata so a UI can show or hide it.
 */
export function notificationMessageRow(
  row: MessageRow,
  input: { notification: string | undefined; data: JsonValue | undefined; hidden: boolean },
): MessageRow {
  const { data } = input;
  const text = [input.notification ?? "", data === undefined ? "" : JSON.stringify(data)]
    .filter((chunk) => chunk.length > 0)
    .join("\n\n");
  return {
    ...row,
    message: {
      ...row.message,
      parts: [{ type: "text", text: text || "(notification)" }],
      metadata: {
        pai: { kind: "notification", hidden: input.hidden, ...(data !== undefined ? { data } : {}) },
      },
    },
  };
}

/** A checked user part (the service refused any other shape) with only its own fields. */
function userPart(part: unknown): unknown {
  const { type, text, mediaType, url, filename } = part as Record<string, unknown>;
  if (type === "text") return { type, text };
  return filename === undefined ? { type, mediaType, url } : { type, mediaType, url, filename };
}

/** A text part with nothing but whitespace in it. */
export function isBlankTextPart(part: unknown): boolean {
  const candidate = part as { type?: unknown; text?: unknown } | null;
  return (
    candidate?.type === "text" && typeof candidate.text === "string" && candidate.text.trim().length === 0
  );
}
