// postgresNotifier: a NotifierV1 over Postgres LISTEN/NOTIFY, shared by every process on one database.
import type { NotifierMessage, NotifierV1 } from "@pai/core";
import { PaiError } from "@pai/core";
// Types only: `pg` is an optional peer dependency, loaded when a notifier first connects or
// publishes, so importing `@pai/storage-kysely` works without it (SQLite, PGlite, MySQL). The
// exported types name no `pg` type either, so they compile without `pg` installed.
import type pg from "pg";

/** The part of a `pg` `Pool` the notifier uses; a `new pg.Pool(...)` fits. */
export type PostgresNotifierPool = {
  query(text: string, values?: unknown[]): Promise<unknown>;
  /** The pool's settings; the listening connection is opened with the same. */
  options: object;
};

export type PostgresNotifierOptions = {
  /** Publishes go through this pool; the listening connection is a separate client with its settings. */
  pool?: PostgresNotifierPool;
  /** Used when no pool is given: the notifier opens (and closes) its own small pool. */
  connectionString?: string;
  /** NOTIFY channel shared by every process of one deployment (default `pai_notify`). */
  channel?: string;
  /** Called with connection errors of the listening client; it reconnects by itself. */
  onError?: (error: unknown) => void;
  /**
   * How long the first publish of a burst waits for more, so that they share one NOTIFY
   * statement (default 0: one turn of the event loop; at most 1000). Watchers, on any server,
   * see commits and live events up to this much later. `minPublishIntervalMs` already gathers
   * what follows a statement; this also holds back the first one.
   */
  publishDelayMs?: number;
  /**
   * The least time between two NOTIFY statements (default 16, one frame at 60 Hz; 0 to 1000). A
   * publish after a quiet spell goes out on the next turn of the event loop (after
   * `publishDelayMs`); what is published within this interval of the last statement waits for it
   * to pass and shares the next one. Every statement is a transaction on the shared database that
   * takes the notify queue's lock, and a run's commits come about a millisecond apart: so a lone
   * commit is announced at once, while a run's burst, or a stream of live deltas, costs one
   * statement per interval per server instead of one per commit (decisions §18).
   */
  minPublishIntervalMs?: number;
};

/** A `NotifierV1` over Postgres LISTEN/NOTIFY. */
export type PostgresNotifier = NotifierV1 & {
  /** Resolves once the listening connection has run LISTEN (subscribing starts it). */
  ready(): Promise<void>;
  close(): Promise<void>;
};

/** Postgres rejects NOTIFY payloads of 8000 bytes or more. */
const MAX_PAYLOAD_BYTES = 7999;
const RECONNECT_MIN_MS = 100;
/** Notifications per NOTIFY statement when publishes queue up. */
const MAX_BATCH = 100;
const RECONNECT_MAX_MS = 5_000;
const DEFAULT_PUBLISH_DELAY_MS = 0;
const DEFAULT_MIN_PUBLISH_INTERVAL_MS = 16;
const MAX_WAIT_MS = 1_000;

type Listener = (message: NotifierMessage) => void;

const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

function milliseconds(name: string, value: unknown, fallback: number): number {
  if (value === undefined) return fallback;
  if (typeof value !== "number" || !Number.isFinite(value) || value < 0 || value > MAX_WAIT_MS) {
    throw new PaiError(
      "INVALID_DEFINITION",
      `postgresNotifier: ${name} must be a number of milliseconds from 0 to ${MAX_WAIT_MS}, got ${String(value)}.`,
    );
  }
  return value;
}

type PgModule = typeof pg;
let pgModule: Promise<PgModule> | undefined;

/** Loads `pg` on first use; a missing package fails with a message saying what to install. */
function loadPg(): Promise<PgModule> {
  pgModule ??= import("pg").then(
    (module) => module.default,
    (error: unknown) => {
      pgModule = undefined;
      throw new PaiError(
        "INVALID_DEFINITION",
        "postgresNotifier needs the `pg` package (an optional peer dependency of @pai/storage-kysely): npm install pg",
        { cause: error },
      );
    },
  );
  return pgModule;
}

function isNotifierMessage(value: unknown): value is NotifierMessage {
  if (typeof value !== "object" || value === null) return false;
  const message = value as Record<string, unknown>;
  return (
    (message.type === "thread-advanced" || message.type === "live") && typeof message.threadId === "string"
  );
}

/**
 * Fans notifier messages out across processes with Postgres LISTEN/NOTIFY, so a watcher on one
 * server sees commits and live events of runs executing on another.
 *
 * The publisher's own subscribers get each message at once, as the in-process notifier gives
 * it: a commit's batch rides along, so a watcher on the same server needs neither the NOTIFY
 * round trip (up to `minPublishIntervalMs` late) nor a storage read. Its echo from Postgres is
 * recognised by the notifier's origin tag and dropped. Messages of one thread keep their order
 * per publisher; across servers, watchers order commits by version and re-read storage where
 * one is missing, so a local commit and a remote one never reach a watcher out of order.
 * Live events too large for a NOTIFY payload are replaced by a small marker and not delivered
 * to other servers; watchers there catch up from storage on the next `thread-advanced`.
 */
export function postgresNotifier(options: PostgresNotifierOptions): PostgresNotifier {
  if (!options.pool && !options.connectionString) {
    throw new PaiError(
      "INVALID_DEFINITION",
      "postgresNotifier needs `pool` (a pg Pool) or `connectionString`.",
    );
  }
  const channel = options.channel ?? "pai_notify";
  const delayMs = milliseconds("publishDelayMs", options.publishDelayMs, DEFAULT_PUBLISH_DELAY_MS);
  const intervalMs = milliseconds(
    "minPublishIntervalMs",
    options.minPublishIntervalMs,
    DEFAULT_MIN_PUBLISH_INTERVAL_MS,
  );
  let lastStatementAt = Number.NEGATIVE_INFINITY;
  /**
   * Waits out what is left of the interval since the last statement, unless a full statement's
   * worth is waiting: then waiting gathers nothing more and only lets the queue grow.
   */
  const spaced = async () => {
    let left = lastStatementAt + intervalMs - performance.now();
    while (left > 0 && queue.length < MAX_BATCH) {
      await sleep(left);
      // A timer counts from the event loop's cached time, which can lag: measure again on waking.
      left = lastStatementAt + intervalMs - performance.now();
    }
  };
  const gather = () => (delayMs === 0 ? nextTurn() : sleep(delayMs));
  // Without a pool given, the notifier's own pool is created on the first publish.
  let ownPool: Promise<pg.Pool> | null = null;
  const getPool = (): Promise<PostgresNotifierPool> => {
    if (options.pool) return Promise.resolve(options.pool);
    ownPool ??= loadPg().then(
      (module) => new module.Pool({ connectionString: options.connectionString, max: 2 }),
    );
    return ownPool;
  };
  const clientConfig: pg.ClientConfig = options.pool
    ? { ...(options.pool.options as pg.ClientConfig) }
    : { connectionString: options.connectionString };
  const listeners = new Map<string, Set<Listener>>();
  // Tags what this notifier sends, so it can drop its own messages when Postgres echoes them.
  const origin = globalThis.crypto.randomUUID().slice(0, 13);

  const deliver = (message: NotifierMessage) => {
    const set = listeners.get(message.threadId);
    if (!set) return;
    for (const listener of [...set]) {
      try {
        listener(message);
      } catch {
        // A faulty listener must not stop delivery to the others.
      }
    }
  };

  let client: pg.Client | null = null;
  let connecting: Promise<void> | null = null;
  let closed = false;
  let delay = RECONNECT_MIN_MS;
  let reconnectTimer: NodeJS.Timeout | null = null;
  let publishChain: Promise<void> = Promise.resolve();

  const dispatch = (payload: string | undefined) => {
    let message: unknown;
    try {
      message = JSON.parse(payload ?? "");
    } catch {
      return;
    }
    if (!isNotifierMessage(message)) return;
    const { o: sender, ...received } = message as NotifierMessage & { o?: unknown };
    // Published here: the subscribers of this process already had it, batch included.
    if (sender === origin) return;
    deliver(received as NotifierMessage);
  };

  const scheduleReconnect = () => {
    if (closed || reconnectTimer) return;
    reconnectTimer = setTimeout(() => {
      reconnectTimer = null;
      connecting = connect().catch(() => {});
    }, delay);
    reconnectTimer.unref();
    delay = Math.min(delay * 2, RECONNECT_MAX_MS);
  };

  const connect = async (): Promise<void> => {
    const { Client } = await loadPg();
    const next = new Client(clientConfig);
    const lost = (error?: unknown) => {
      if (error !== undefined) options.onError?.(error);
      if (client === next) client = null;
      next.removeAllListeners();
      next.on("error", () => {});
      next.end().catch(() => {});
      scheduleReconnect();
    };
    next.on("error", lost);
    next.on("end", () => lost());
    next.on("notification", (notification) => {
      if (notification.channel === channel) dispatch(notification.payload);
    });
    try {
      await next.connect();
      await next.query(`LISTEN ${next.escapeIdentifier(channel)}`);
    } catch (error) {
      lost(error);
      throw error;
    }
    if (closed) {
      await next.end().catch(() => {});
      return;
    }
    client = next;
    delay = RECONNECT_MIN_MS;
  };

  const start = (): Promise<void> => {
    if (closed)
      return Promise.reject(new PaiError("INTERNAL", "This postgresNotifier is closed; create a new one."));
    if (client) return Promise.resolve();
    connecting ??= connect().finally(() => {
      connecting = null;
    });
    return connecting;
  };

  type Queued = { payload: string; resolve: () => void; reject: (error: unknown) => void };
  const queue: Queued[] = [];

  /**
   * Sends queued messages in order, as many per statement as are waiting: under load one round
   * trip carries many notifications instead of each waiting for the previous one. Postgres drops
   * a repeated payload within one transaction, so a batch ends before a payload it already holds.
   */
  const flush = async (): Promise<void> => {
    while (queue.length > 0) {
      await spaced();
      const seen = new Set<string>();
      let size = 0;
      while (size < queue.length && size < MAX_BATCH && !seen.has(queue[size]!.payload)) {
        seen.add(queue[size]!.payload);
        size++;
      }
      const batch = queue.slice(0, size);
      const calls = batch.map((_, index) => `pg_notify($1, $${index + 2})`).join(", ");
      try {
        const pool = await getPool();
        lastStatementAt = performance.now();
        await pool.query(`select ${calls}`, [channel, ...batch.map((item) => item.payload)]);
        for (const item of batch) item.resolve();
      } catch (error) {
        for (const item of batch) item.reject(error);
      }
      queue.splice(0, size);
    }
  };

  const encode = (message: NotifierMessage): string => {
    // A committed batch rides along only in process: every instance would parse it, and it would
    // rarely fit a payload. Watchers read it from storage by version.
    const sent: NotifierMessage =
      message.type === "thread-advanced" && message.committed
        ? { type: message.type, threadId: message.threadId, version: message.version }
        : message;
    const payload = JSON.stringify({ ...sent, o: origin });
    if (Buffer.byteLength(payload, "utf8") <= MAX_PAYLOAD_BYTES) return payload;
    return JSON.stringify({ type: "live-dropped", threadId: message.threadId.slice(0, 1000) });
  };

  return {
    specificationVersion: "v1",

    publish(message) {
      if (closed)
        return Promise.reject(new PaiError("INTERNAL", "This postgresNotifier is closed; create a new one."));
      const payload = encode(message);
      deliver(message);
      return new Promise<void>((resolve, reject) => {
        queue.push({ payload, resolve, reject });
        // The first publish of a burst waits `publishDelayMs`, so what a run publishes meanwhile
        // (its commits, its live events) goes out in one statement.
        if (queue.length === 1) publishChain = publishChain.then(gather).then(flush);
      });
    },

    subscribe(threadId, listener) {
      let set = listeners.get(threadId);
      if (!set) {
        set = new Set();
        listeners.set(threadId, set);
      }
      set.add(listener);
      start().catch((error) => options.onError?.(error));
      return () => {
        set.delete(listener);
        if (set.size === 0) listeners.delete(threadId);
      };
    },

    async ready() {
      while (!client) await start();
    },

    async close() {
      closed = true;
      if (reconnectTimer) clearTimeout(reconnectTimer);
      await connecting?.catch(() => {});
      const current = client;
      client = null;
      if (current) {
        current.removeAllListeners();
        current.on("error", () => {});
        await current.end().catch(() => {});
      }
      await publishChain;
      const opened = await ownPool?.catch(() => null);
      await opened?.end();
      listeners.clear();
    },
  };
}
