import type { AnyCapability } from "../capabilities/capability.js";
import { PaiError } from "../errors/pai-error.js";

/** What a binding receives when the runtime acquires a capability for a tool call. */
export type CapabilityAcquireContext = {
  capabilityId: string;
  scopeKey: string;
  threadId: string;
  /**
   * A key unique to (scope, thread, capability) that cannot collide across scopes even
   * when thread ids repeat: use it to name provider-side resources.
   */
  resourceKey: string;
  signal: AbortSignal;
};

/**
 * Implementation of a capability, given at `createAgentRuntime({ capabilities: { [id]: binding } })`.
 * `lifetime: "thread"` (default) keeps one facade per scope + thread until the thread goes idle
 * for `idleTimeoutMs` or the runtime closes; `"call"` acquires and releases around each call.
 */
export type CapabilityBinding<TFacade = unknown> = {
  acquire(context: CapabilityAcquireContext): TFacade | Promise<TFacade>;
  release?(facade: TFacade, context: Omit<CapabilityAcquireContext, "signal">): void | Promise<void>;
  lifetime?: "thread" | "call";
  /** For `lifetime: "thread"`: release after the thread has been idle this long. Default: at run end. */
  idleTimeoutMs?: number;
};

type Held = {
  facade: Promise<unknown>;
  binding: CapabilityBinding<any>;
  context: Omit<CapabilityAcquireContext, "signal">;
  timer?: ReturnType<typeof setTimeout>;
};

/** Owns acquired capability facades and their release. */
export class CapabilityRegistry {
  readonly #held = new Map<string, Held>();

  constructor(
    readonly bindings: Record<string, CapabilityBinding<any>>,
    readonly onError: (error: unknown) => void,
  ) {}

  binding(capability: AnyCapability): CapabilityBinding<any> | undefined {
    return this.bindings[capability.id];
  }

  /** Acquires (or reuses) the facade of one capability for a call. */
  async acquire(
    capability: AnyCapability,
    input: { scopeKey: string; threadId: string; signal: AbortSignal },
  ): Promise<{ facade: unknown; done: () => Promise<void> }> {
    const binding = this.bindings[capability.id];
    if (!binding) {
      throw new PaiError(
        "INVALID_DEFINITION",
        `No binding for capability "${capability.id}". Pass it to createAgentRuntime({ capabilities: { "${capability.id}": binding } }).`,
      );
    }
    input.signal.throwIfAborted();
    const resourceKey = `${capability.id}:${encodeURIComponent(input.scopeKey)}:${encodeURIComponent(input.threadId)}`;
    const context = {
      capabilityId: capability.id,
      scopeKey: input.scopeKey,
      threadId: input.threadId,
      resourceKey,
    };
    if (binding.lifetime === "call") {
      const facade = await binding.acquire({ ...context, signal: input.signal });
      return { facade, done: async () => void (await binding.release?.(facade, context)) };
    }
    let held = this.#held.get(resourceKey);
    if (!held) {
      const facade = Promise.resolve(binding.acquire({ ...context, signal: input.signal }));
      held = { facade, binding, context };
      this.#held.set(resourceKey, held);
      facade.catch(() => this.#held.delete(resourceKey));
    }
    if (held.timer) {
      clearTimeout(held.timer);
      held.timer = undefined;
    }
    return { facade: await held.facade, done: async () => undefined };
  }

  /** Called when a thread's run ends or parks: releases or schedules release of its facades. */
  threadIdle(scopeKey: string, threadId: string): void {
    for (const [key, held] of this.#held) {
      if (held.context.scopeKey !== scopeKey || held.context.threadId !== threadId) continue;
      const timeout = held.binding.idleTimeoutMs;
      if (timeout === undefined || timeout <= 0) {
        void this.#release(key, held);
      } else if (!held.timer) {
        held.timer = setTimeout(() => void this.#release(key, held), timeout);
        held.timer.unref?.();
      }
    }
  }

  async #release(key: string, held: Held): Promise<void> {
    if (this.#held.get(key) !== held) return;
    this.#held.delete(key);
    if (held.timer) clearTimeout(held.timer);
    try {
      const facade = await held.facade;
      await held.binding.release?.(facade, held.context);
    } catch (error) {
      this.onError(error);
    }
  }

  /** Number of facades currently held (tests assert release). */
  get size(): number {
    return this.#held.size;
  }

  async closeAll(): Promise<void> {
    await Promise.all([...this.#held].map(([key, held]) => this.#release(key, held)));
  }
}
