import type { Experimental_DownloadFunction, LanguageModel } from "ai";
import type { RuntimeHooks } from "../definitions/agent-types.js";
import type { Scope } from "../definitions/identity.js";
import type { JsonLimits } from "../json/json-value.js";
import type { AnyPaiPlugin } from "../plugins/plugin-types.js";
import type { DispatchV1 } from "../ports/dispatch.js";
import type { FilesV1 } from "../ports/files.js";
import type { NotifierV1 } from "../ports/notifier.js";
import type { StorageV1 } from "../ports/storage.js";
import type { CapabilityBinding } from "./capability-bindings.js";
import type { RuntimeObserver } from "./runtime-events.js";

/** Details handed to `onRuntimeError`; clients only ever see a redacted message. */
export type RuntimeErrorReport = {
  error: unknown;
  phase: "model" | "tool" | "hook" | "run" | "recovery" | "notifier" | "request";
  /** Set for a failed request: the reference its client received in the INTERNAL error. */
  correlationId?: string;
  /** Set for a failed request: the service operation, e.g. `threads.send`. */
  operation?: string;
  threadId?: string;
  runId?: string;
  toolName?: string;
  toolCallId?: string;
};

/** Derives the trusted scope of a request from the host's identity. */
export type ScopeResolver<TIdentity> = (identity: TIdentity) => Scope | Promise<Scope>;

/**
 * The `scope` option: required unless the identity type itself carries `scopeKey: string`
 * (then the default reads `identity.scopeKey` / `identity.userKey`). There is no shared
 * default tenant: a request whose identity yields no scope is refused with FORBIDDEN.
 */
export type ScopeOption<TIdentity> = [TIdentity] extends [{ scopeKey: string }]
  ? {
      /** Derives the trusted scope from the identity. Default: its `scopeKey` and `userKey`. */
      scope?: ScopeResolver<TIdentity>;
    }
  : {
      /**
       * Derives the trusted scope (tenant) from the host's identity, e.g.
       * `(user) => ({ scopeKey: user.orgId, userKey: user.id })`. Required because the identity
       * type has no `scopeKey`; a single-tenant app says so: `scope: () => ({ scopeKey: "app" })`.
       */
      scope: ScopeResolver<TIdentity>;
    };

/** Options shared by `createPai` and `createAgentRuntime`. */
export type RuntimeOptions = {
  storage: StorageV1;
  /** Cross-instance notifications; the storage's own notifier if it has one, else in-process. */
  notifier?: NotifierV1;
  files?: FilesV1;
  /**
   * Where runs are driven and wake-ups are scheduled. Default: in this process (a commit that
   * starts a run drives it here). With a job engine (`@pai/dispatch-pgboss`,
   * `@pai/dispatch-bullmq`) every run goes out as a job and is driven by a process that called
   * `pai.startWorker()`; a process that never does is an API instance. The runtime never closes
   * a dispatch passed here.
   */
  dispatch?: DispatchV1;
  /** Bindings for capability tokens, keyed by capability id. */
  capabilities?: Record<string, CapabilityBinding<any>>;
  /** Model used when an agent declares none. */
  model?: LanguageModel;
  /**
   * Fetches file URLs of the model prompt in this process: the AI SDK's download function
   * (`experimental_download` of `streamText`), called with every URL of the prompt's file parts
   * (user messages and tool outputs) and whether the model supports it; `null` for an entry
   * passes that URL to the provider as it is.
   *
   * Default: none. Every URL goes to the provider unchanged and this process fetches nothing, so
   * a user's file part cannot make the server request an internal address (SSRF); a provider
   * that cannot read a URL itself may refuse the call instead. A host that wants downloads opts
   * in, for origins it trusts and bounded, e.g. `createDownload({ maxBytes })` from `ai` behind
   * an allow-list. The AI SDK refuses literal private addresses but does not resolve host names:
   * never hand it every URL on a server that can reach internal services.
   */
  download?: Experimental_DownloadFunction;
  /**
   * Bounds of every JSON value entering the runtime (metadata, messages, payloads, tool
   * outputs, tool data, suspend data, client-tool snapshots). Default depth 64, size 4 MiB.
   */
  jsonLimits?: Partial<JsonLimits>;
  /** Injected clock (tests use a simulated one). */
  clock?: () => Date;
  /** Injected id generator (tests use sequential ids). */
  generateId?: () => string;
  /**
   * Hooks for every agent of this runtime: `afterToolResult` runs before an agent's own (and
   * its plugins'), `mapError` answers when an agent's own returns nothing.
   */
  hooks?: RuntimeHooks;
  /** Full details of unexpected errors (tools, hooks, models, recovery). */
  onRuntimeError?: (report: RuntimeErrorReport) => void;
  /**
   * A watcher that hears no notification for this long re-reads storage anyway, in ms, so a
   * notification that never arrived (its publisher crashed right after the commit, or the
   * listening connection was down) delays a watcher by at most this. Default 15 s.
   */
  watchCatchUpMs?: number;
  /** Lease length for runs driven by this process, in ms. Default 30 s. */
  leaseMs?: number;
  /** Identifies this process in leases. Default: a random id. */
  instanceId?: string;
  /** Default step limit when an agent sets no `maxSteps`. Default 20. */
  maxSteps?: number;
  /** Maximum serialized size of a request's client-tool snapshot, in bytes. Default 64 KiB. */
  maxClientToolsBytes?: number;
  /**
   * Watches (`threads.watch`, and every stream built on it: tRPC subscriptions, AI SDK chat
   * streams) and calls waiting on their run (`waitMs`) one user may hold open at once on this
   * process; one more answers TOO_MANY_REQUESTS, before it writes anything. Counted per scope and
   * user key (per scope when the scope has no user key). Default 32; `Infinity` lifts the bound.
   */
  maxWatchesPerUser?: number;
  /**
   * Observers of runtime events (runs, steps, model calls, tool calls, pending actions),
   * called synchronously and in order. Plugins' hooks are added after these.
   */
  observers?: RuntimeObserver[];
  /**
   * Plugins (`definePlugin`): their tools, capability bindings and hooks are merged into the
   * runtime when it is created. Conflicts throw `INVALID_DEFINITION`.
   */
  plugins?: readonly AnyPaiPlugin[];
};
