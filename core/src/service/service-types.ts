import type { JsonObject, JsonValue } from "../json/json-value.js";
import type { StoredFileBody, UploadedFile } from "../ports/files.js";
import type { LiveEvent, ThreadEvent } from "../state/events.js";
import type { ActionRow, ActionState, ClientToolSnapshot, ThreadRow } from "../state/rows.js";
import type { ThreadSnapshot } from "../state/snapshot.js";
import type { Identity } from "./identity.js";

/** Every service call carries the caller's identity; the service derives the trusted scope from it. */
export type WithIdentity<T, TIdentity = Identity> = T & { identity: TIdentity };

/** A user message as a client sends it: plain text, or native AI SDK text/file parts. */
export type OutgoingMessage =
  | { text: string; id?: string }
  | {
      id?: string;
      parts: Array<
        { type: "text"; text: string } | { type: "file"; mediaType: string; url: string; filename?: string }
      >;
    };

/** Request-scoped extras accepted wherever a run starts or continues. */
export type RunRequestOptions = {
  /** Frontend-defined client tools for this run (spec 03). Untrusted; validated structurally. */
  clientTools?: ClientToolSnapshot[];
  /** Untrusted request data handed to resolvers. Never authorization. */
  clientData?: JsonValue;
};

/**
 * Asked with `waitMs`: the call answers once the run it started or resumed has stopped (parked on
 * pending actions, completed, failed or cancelled), or when `waitMs` has passed, whichever comes
 * first. At most 60,000 ms.
 */
export type WaitOption = {
  waitMs?: number;
  /**
   * Ends the wait early, e.g. when the caller's request is gone: the call then answers at once
   * with `settled.done` false (or true if the run stopped meanwhile). It never undoes the write,
   * which is committed before any wait begins.
   */
  signal?: AbortSignal;
};

/** The thread when a waiting call answered; `done` is false when `waitMs` passed first. */
export type SettledRun = { done: boolean; snapshot: ThreadSnapshot };

export type SendResult = {
  threadId: string;
  runId: string;
  version: number;
  /** With `waitMs`: the thread once the run stopped. */
  settled?: SettledRun;
};

export type ActionResult = {
  action: ActionRow;
  /** Thread version after the resolution was committed. */
  version: number;
  /** With `waitMs`: the thread once the answered action's run stopped (at once if it still waits on others). */
  settled?: SettledRun;
};

/** An item of `watch`: committed events (with their version) or transient live events. */
export type WatchEvent =
  | { type: "committed"; threadId: string; version: number; events: ThreadEvent[]; createdAt: string }
  | { type: "live"; threadId: string; event: LiveEvent };

export type ListResult<T> = { items: T[]; nextCursor: string | null };

/**
 * The transport-neutral service every transport exposes. All scope checks happen here:
 * a thread, action or file of another scope is NOT_FOUND.
 */
export interface PaiService<TIdentity = Identity, TAgent = unknown> {
  /**
   * Type-only: the agents this service runs, so a transport can type action payloads by name.
   * Never set at run time.
   */
  readonly "~agents"?: TAgent;

  manifest(input: WithIdentity<{ agentId?: string }, TIdentity>): Promise<JsonObject>;

  threads: {
    /**
     * Ids are chosen by the server, so no tenant can probe or reserve another tenant's ids.
     * With `message`, the thread is created with its first message and its run started in one
     * commit (what `create` then `send` do in two): the row returned is then `running`, with the
     * run's id in `activeRunId`.
     */
    create(
      input: WithIdentity<
        {
          agentId?: string;
          title?: string;
          metadata?: JsonObject;
          message?: OutgoingMessage;
        } & RunRequestOptions &
          WaitOption,
        TIdentity
      >,
    ): Promise<ThreadRow & { settled?: SettledRun }>;
    list(
      input: WithIdentity<{ agentId?: string; limit?: number; cursor?: string | null }, TIdentity>,
    ): Promise<ListResult<ThreadRow>>;
    /** Rows of the thread; `projectThreadState` turns them into the client view. */
    get(input: WithIdentity<{ threadId: string }, TIdentity>): Promise<ThreadSnapshot>;
    send(
      input: WithIdentity<
        { threadId: string; message: OutgoingMessage; cancelPending?: boolean } & RunRequestOptions &
          WaitOption,
        TIdentity
      >,
    ): Promise<SendResult>;
    cancel(
      input: WithIdentity<{ threadId: string; reason?: string }, TIdentity>,
    ): Promise<{ version: number }>;
    /** Committed events after `afterVersion`, then live until `signal` aborts. */
    watch(
      input: WithIdentity<{ threadId: string; afterVersion?: number; signal?: AbortSignal }, TIdentity>,
    ): AsyncIterable<WatchEvent>;
  };

  actions: {
    list(
      input: WithIdentity<{ state?: ActionState; limit?: number; cursor?: string | null }, TIdentity>,
    ): Promise<ListResult<ActionRow>>;
    submit(
      input: WithIdentity<
        {
          threadId: string;
          actionId: string;
          /** When given, the action must have this qualified name (`tool.point` / `tool.output`). */
          name?: string;
          payload: unknown;
          idempotencyKey?: string;
        } & RunRequestOptions &
          WaitOption,
        TIdentity
      >,
    ): Promise<ActionResult>;
    cancel(
      input: WithIdentity<
        { threadId: string; actionId: string; reason?: string; idempotencyKey?: string } & WaitOption,
        TIdentity
      >,
    ): Promise<ActionResult>;
    fail(
      input: WithIdentity<
        {
          threadId: string;
          actionId: string;
          error: string | { message: string };
          idempotencyKey?: string;
        } & WaitOption,
        TIdentity
      >,
    ): Promise<ActionResult>;
  };

  files: {
    upload(
      input: WithIdentity<
        {
          threadId?: string | null;
          filename: string;
          mediaType: string;
          body: Uint8Array | ReadableStream<Uint8Array>;
          size?: number;
          metadata?: JsonObject;
        },
        TIdentity
      >,
    ): Promise<UploadedFile>;
    get(input: WithIdentity<{ fileId: string }, TIdentity>): Promise<StoredFileBody>;
    head(input: WithIdentity<{ fileId: string }, TIdentity>): Promise<UploadedFile>;
    downloadUrl?(
      input: WithIdentity<{ fileId: string; expiresInSeconds?: number }, TIdentity>,
    ): Promise<string | null>;
  };
}
