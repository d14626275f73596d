import {
  defineAgent,
  defineTool,
  type RuntimeErrorReport,
  type StorageCommitResult,
  type StorageV1,
  type ThreadSnapshot,
} from "@pai/core";
import { applyStoredEvents } from "@pai/core/protocol";
import { createTestRuntime, type ScriptedStep, scriptedModel, type TestRuntime } from "@pai/core/testing";
import { memoryStorage } from "@pai/storage-memory";
import { z } from "zod";
import { emptySnapshot } from "../../../src/runtime/thread-store.js";

/**
 * The system under test of the runtime model test: one agent on memory storage wrapped in a
 * conflict injector, a runtime that can be restarted on the same storage, a watcher per
 * thread folding `service.threads.watch`, and a log of every observer and hook call.
 */

export const IDENTITY = { scopeKey: "test-scope", userKey: "test-user" };
export const SCOPE = { scopeKey: "test-scope", userKey: "test-user" };

/** What the scripted model does on a user message: which tools it calls (then it answers with text). */
export type Plan = "pick" | "approve" | "both" | "text";

/** One call of an `onOutput` observer or of `lifecycle.afterToolResult`, as the test saw it. */
export type HookCall = {
  hook: "onOutput" | "afterToolResult";
  toolName: string;
  toolCallId: string;
  /** onOutput: the output; afterToolResult: the result (`{ type, output }` / `{ type, errorText }`). */
  value: unknown;
  /** Which runtime (0 = first, +1 per restart) ran it. */
  generation: number;
};

/** The output tool: no `execute`, so every call becomes a `pick.output` action a client answers. */
export const pickTool = defineTool({
  id: "test.model.pick.v1",
  description: "Let the client pick an option",
  inputSchema: z.object({ options: z.array(z.string()) }),
  outputSchema: z.object({ choice: z.string() }),
});

/** The suspending tool: waits at `approval`, and on resume returns the resume payload as its output. */
export const approveTool = defineTool({
  id: "test.model.approve.v1",
  description: "Ask for approval",
  inputSchema: z.object({ summary: z.string() }),
  outputSchema: z.object({ answer: z.string() }),
  suspend: {
    approval: {
      suspendSchema: z.object({ prompt: z.string() }),
      resumeSchema: z.object({ answer: z.string() }),
    },
  },
  execute: (ctx: any) =>
    ctx.entry.type === "initial" ? ctx.suspend("approval", { prompt: ctx.input.summary }) : ctx.entry.resume,
});

/** The agent; `log` receives every observer and hook call, `onOutputHook` may add behaviour (e.g. throw). */
export function buildAgent(
  log: HookCall[],
  generation: () => number,
  onOutputHook?: (call: HookCall) => void,
) {
  const onOutput =
    (toolName: string) =>
    ({ output, call }: { output: unknown; call: { toolCallId: string } }) => {
      const entry: HookCall = {
        hook: "onOutput",
        toolName,
        toolCallId: call.toolCallId,
        value: structuredClone(output),
        generation: generation(),
      };
      log.push(entry);
      onOutputHook?.(entry);
    };
  return defineAgent({
    tools: {
      pick: { tool: pickTool, onOutput: onOutput("pick") },
      approve: { tool: approveTool, onOutput: onOutput("approve") },
    },
    lifecycle: {
      afterToolResult: ({ name, toolCallId, result }) => {
        log.push({
          hook: "afterToolResult",
          toolName: name,
          toolCallId,
          value: structuredClone(result),
          generation: generation(),
        });
      },
    },
  });
}

/**
 * A scripted model that decides from the prompt, so a run re-issued after a restart behaves
 * the same: after a user message it calls the tools its `plan:<Plan>` text names, and after
 * tool results it answers with text (which ends the run). Tool call ids are unique per model.
 */
export function planModel() {
  let calls = 0;
  return scriptedModel(
    (call): ScriptedStep => {
      const last = call.prompt.at(-1);
      if (last?.role === "user") {
        const text = last.content.map((part) => (part.type === "text" ? part.text : "")).join("");
        const plan = (/plan:(\w+)/.exec(text)?.[1] ?? "text") as Plan;
        const toolCalls: NonNullable<ScriptedStep["toolCalls"]> = [];
        if (plan === "pick" || plan === "both") {
          toolCalls.push({ toolName: "pick", toolCallId: `call-${++calls}`, input: { options: ["a", "b"] } });
        }
        if (plan === "approve" || plan === "both") {
          toolCalls.push({ toolName: "approve", toolCallId: `call-${++calls}`, input: { summary: "ship" } });
        }
        if (toolCalls.length > 0) return { toolCalls };
      }
      return { text: "Done." };
    },
    { recordCalls: false },
  );
}

/** A small deterministic PRNG (mulberry32), so a fast-check seed reproduces the injected conflicts. */
export function prng(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export type ConflictInjection = {
  /** Chance that a commit is answered with an injected version conflict (nothing written). */
  probability: number;
  seed: number;
  /**
   * At most this many injected conflicts in a row per thread. The runtime retries a conflicted
   * commit a bounded number of times (8), so an unbounded streak would make an honest request
   * fail with "kept changing"; a short streak still forces every commit path to re-decide.
   */
  maxConsecutive: number;
};

/**
 * Wraps a storage so that `commit` sometimes answers `{ ok: false, reason: "conflict" }` without
 * writing, as if another process had just written: every runtime path that commits must reload
 * and re-decide on fresh state. Thread creation (`expectedVersion: 0`) is never touched.
 */
export function conflictInjectingStorage(inner: StorageV1, injection: ConflictInjection) {
  const random = prng(injection.seed);
  const streak = new Map<string, number>();
  const stats = { commits: 0, injected: 0 };
  const control = { enabled: true };
  const commit = async (input: Parameters<StorageV1["commit"]>[0]): Promise<StorageCommitResult> => {
    stats.commits++;
    const inRow = streak.get(input.threadId) ?? 0;
    if (
      control.enabled &&
      input.expectedVersion > 0 &&
      inRow < injection.maxConsecutive &&
      random() < injection.probability
    ) {
      streak.set(input.threadId, inRow + 1);
      stats.injected++;
      const current = await inner.loadThread({ threadId: input.threadId });
      return { ok: false, reason: "conflict", currentVersion: current?.thread.version ?? null };
    }
    streak.set(input.threadId, 0);
    return inner.commit(input);
  };
  const storage = new Proxy(inner, {
    get(target, property, receiver) {
      if (property === "commit") return commit;
      const value = Reflect.get(target, property, receiver);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
  return { storage, stats, control };
}

/**
 * A client of `service.threads.watch`: folds every committed batch into a snapshot, checking
 * that versions arrive consecutively (nothing lost, nothing twice). Reconnects after a restart
 * with `afterVersion` = the last version it folded, like a client would.
 */
export class Watcher {
  snapshot: ThreadSnapshot;
  version = 0;
  problems: string[] = [];
  #controller: AbortController | undefined;
  #done: Promise<void> | undefined;

  constructor(readonly threadId: string) {
    // The snapshot a watcher folds its first committed batch into (the runtime's own empty state).
    this.snapshot = emptySnapshot(threadId, "1970-01-01T00:00:00.000Z");
  }

  start(runtime: TestRuntime<any>): void {
    const controller = new AbortController();
    this.#controller = controller;
    const events = runtime.pai.service.threads.watch({
      identity: IDENTITY,
      threadId: this.threadId,
      afterVersion: this.version,
      signal: controller.signal,
    });
    this.#done = (async () => {
      try {
        for await (const item of events) {
          if (item.type !== "committed") continue;
          if (item.version !== this.version + 1) {
            this.problems.push(`watch delivered version ${item.version} after ${this.version}`);
          }
          this.snapshot = applyStoredEvents(this.snapshot, {
            threadId: item.threadId,
            version: item.version,
            events: item.events,
            createdAt: item.createdAt,
          });
          this.version = item.version;
        }
      } catch (error) {
        if (!controller.signal.aborted) this.problems.push(`watch failed: ${String(error)}`);
      }
    })();
  }

  async stop(): Promise<void> {
    this.#controller?.abort();
    await this.#done;
    this.#controller = undefined;
    this.#done = undefined;
  }
}

/** A strictly increasing clock near real time, shared by every runtime of one system. */
function monotonicClock(): () => Date {
  let last = 0;
  return () => {
    last = Math.max(Date.now(), last + 1);
    return new Date(last);
  };
}

export type SystemOptions = {
  threads: number;
  injection: ConflictInjection;
  /** Extra behaviour of every onOutput call (the focused tests make it throw). */
  onOutputHook?: (call: HookCall) => void;
};

/** The system under test: storage, the current runtime, watchers and the hook log. */
export class RuntimeSystem {
  readonly inner: StorageV1 = memoryStorage();
  readonly storage: StorageV1;
  readonly injection: ReturnType<typeof conflictInjectingStorage>;
  readonly hooks: HookCall[] = [];
  readonly reports: RuntimeErrorReport[] = [];
  readonly threadIds: string[] = [];
  readonly watchers = new Map<string, Watcher>();
  readonly clock = monotonicClock();
  readonly model = planModel();
  readonly agent;
  generation = 0;
  runtime!: TestRuntime<any>;
  #keys = 0;
  #tags = 0;

  private constructor(readonly options: SystemOptions) {
    this.injection = conflictInjectingStorage(this.inner, options.injection);
    this.storage = this.injection.storage;
    this.agent = buildAgent(this.hooks, () => this.generation, options.onOutputHook);
  }

  static async create(options: SystemOptions): Promise<RuntimeSystem> {
    const system = new RuntimeSystem(options);
    system.runtime = await system.#newRuntime(system.storage);
    for (let index = 0; index < options.threads; index++) {
      const threadId = await system.runtime.createThread();
      system.threadIds.push(threadId);
      const watcher = new Watcher(threadId);
      watcher.start(system.runtime);
      system.watchers.set(threadId, watcher);
    }
    return system;
  }

  #newRuntime(storage: StorageV1): Promise<TestRuntime<any>> {
    return createTestRuntime({
      agent: this.agent,
      storage,
      model: this.model,
      identity: IDENTITY,
      clock: this.clock,
      onRuntimeError: (report) => void this.reports.push(report),
    });
  }

  /** A fresh idempotency key. */
  key(): string {
    return `key-${++this.#keys}`;
  }

  /** A fresh tag that makes a payload, reason or error unique. */
  tag(): string {
    return `p${++this.#tags}`;
  }

  get service() {
    return this.runtime.pai.service;
  }

  /** The thread as storage has it (bypassing every runtime cache). */
  async stored(threadId: string): Promise<ThreadSnapshot> {
    const snapshot = await this.inner.loadThread({ threadId });
    if (!snapshot) throw new Error(`Thread ${threadId} is not stored.`);
    return snapshot;
  }

  /** The thread as a brand-new runtime on the same storage reads it through the service. */
  async reloaded(threadId: string): Promise<ThreadSnapshot> {
    const fresh = await this.#newRuntime(this.inner);
    try {
      return await fresh.pai.service.threads.get({ identity: IDENTITY, threadId });
    } finally {
      await fresh.close();
    }
  }

  /** Simulates a process restart: close the runtime, build another on the same storage, recover. */
  async restart(): Promise<number> {
    for (const watcher of this.watchers.values()) await watcher.stop();
    await this.runtime.close();
    this.generation++;
    this.runtime = await this.#newRuntime(this.storage);
    const adopted = await this.runtime.pai.recover();
    for (const watcher of this.watchers.values()) watcher.start(this.runtime);
    return adopted;
  }

  /** Until this process has no work in flight for any thread (runs, resumed tools, queued starts). */
  async waitForIdle(): Promise<void> {
    // Threads never create work for each other here, so one pass settles all of them.
    for (const threadId of this.threadIds) await this.runtime.waitForIdle(threadId);
  }

  async dispose(): Promise<void> {
    for (const watcher of this.watchers.values()) await watcher.stop();
    await this.runtime.close();
  }
}
