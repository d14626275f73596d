import type {
  ActionResult,
  ActionRow,
  JsonObject,
  ListResult,
  PaiService,
  SendResult,
  ThreadRow,
  ThreadSnapshot,
  WatchEvent,
} from "@pai/core";
import type { ClientUploadedFile } from "@pai/core/protocol";

/**
 * The input of a service method without the `identity` the server adds from its own context, and
 * without `waitMs` and the `signal` that ends a wait: the thread client learns a run's progress by
 * watching or refreshing, and a transport answers a waiting call in its own shape (tRPC: the
 * client view).
 */
type ClientInput<TMethod extends (input: never) => unknown> = Omit<
  Parameters<TMethod>[0],
  "identity" | "waitMs" | "signal"
>;

/** A result as a transport answers it to a call that did not wait. */
type Answered<T> = Omit<T, "settled">;

/** A file fetched through a transport: its bytes inline, or a time-limited URL to download them. */
export type FileDownload =
  | { file: ClientUploadedFile; body: Uint8Array; downloadUrl?: undefined }
  | { file: ClientUploadedFile; downloadUrl: string; body?: undefined };

/**
 * How `@pai/client` reaches a PAI server: the `PaiService` surface without `identity` (the
 * server derives it from the request). `@pai/transport-trpc/client` implements it over tRPC;
 * `serviceTransport` implements it in-process. Implementations reject with `PaiError`s.
 */
export interface PaiTransport {
  manifest(input?: { agentId?: string }): Promise<JsonObject>;
  threads: {
    create(input: ClientInput<PaiService["threads"]["create"]>): Promise<ThreadRow>;
    list(input?: ClientInput<PaiService["threads"]["list"]>): Promise<ListResult<ThreadRow>>;
    get(input: { threadId: string }): Promise<ThreadSnapshot>;
    send(input: ClientInput<PaiService["threads"]["send"]>): Promise<Answered<SendResult>>;
    cancel(input: { threadId: string; reason?: string }): Promise<{ version: number }>;
    /**
     * Committed events after `afterVersion`, then live events until `signal` aborts. May end or
     * throw when the connection drops; the thread client reconnects from its last version.
     */
    watch(input: {
      threadId: string;
      afterVersion?: number;
      signal?: AbortSignal;
      /** Called when the stream is established (before any event). */
      onOpen?: () => void;
    }): AsyncIterable<WatchEvent>;
  };
  actions: {
    list(input?: ClientInput<PaiService["actions"]["list"]>): Promise<ListResult<ActionRow>>;
    submit(input: ClientInput<PaiService["actions"]["submit"]>): Promise<Answered<ActionResult>>;
    cancel(input: ClientInput<PaiService["actions"]["cancel"]>): Promise<Answered<ActionResult>>;
    fail(input: ClientInput<PaiService["actions"]["fail"]>): Promise<Answered<ActionResult>>;
  };
  files: {
    upload(input: {
      threadId?: string | null;
      filename: string;
      mediaType: string;
      body: Uint8Array;
      metadata?: JsonObject;
    }): Promise<ClientUploadedFile>;
    /** Metadata plus the bytes, or a download URL when the server's file provider presigns. */
    get(input: { fileId: string; inline?: boolean }): Promise<FileDownload>;
  };
}
