import { PaiError } from "../errors/pai-error.js";
import type { Decide, Decision, Effect } from "../state/deciders/decision.js";
import type { ThreadSnapshot } from "../state/snapshot.js";
import { withWakeAt } from "../state/wake.js";
import type { RuntimeScope } from "./definition-shapes.js";
import type { RequestContext } from "./request-context.js";
import type { RunLeases } from "./run-leases.js";
import type { ThreadStore, TransactResult } from "./thread-store.js";

/**
 * The request a commit was made for, as its effects need it: whose identity and scope drive what
 * it starts, and for an answer, the request context, the schema-parsed resume value and the
 * call's input (values that are not JSON, so they stay out of the effects themselves).
 */
export type CommitOrigin = {
  identity: unknown;
  scope?: RuntimeScope;
  request?: RequestContext;
  resume?: unknown;
  callInput?: unknown;
};

export type CommitOptions = {
  /** The run whose lease this process must hold for the write (every write of a driver). */
  fence?: string;
  /** A snapshot the caller just read (saves a read; a conflict still re-reads). */
  fresh?: ThreadSnapshot;
  create?: boolean;
  origin?: CommitOrigin;
  /** The caller carries the effects out itself, later (`carryOut`): a run that completes with its last step is reported after the step. */
  deferEffects?: boolean;
};

export type Committed<T> = TransactResult & { value: T; effects: Effect[] };

export type EffectPerformer = (
  effects: Effect[],
  committed: TransactResult,
  origin: CommitOrigin | undefined,
) => Promise<void>;

/**
 * The runtime's one writer. A commit (1) checks the run's lease when the write is a driver's
 * (`fence`), (2) decides on the freshest state and commits against its version, re-deciding
 * after a conflict, (3) takes a run lease in the same write when the decision asks for it, and
 * only then (4) carries out the winning decision's effects. A decision that lost a race never
 * has its effects run.
 */
export class RunWriter {
  constructor(
    readonly store: ThreadStore,
    readonly leases: RunLeases,
    readonly perform: EffectPerformer,
    /** False when runs are driven by workers of a job engine: a commit then takes no lease. */
    readonly takesLeases: () => boolean = () => true,
  ) {}

  async commit<T>(threadId: string, decide: Decide<T>, options: CommitOptions = {}): Promise<Committed<T>> {
    const committed = await this.#write(threadId, decide, options);
    // Most driver commits carry no effect: no call, no extra promise per write.
    if (!options.deferEffects && committed.effects.length > 0) {
      await this.perform(committed.effects, committed, options.origin);
    }
    return committed;
  }

  /** Carries out the effects of a commit made with `deferEffects`. */
  async carryOut(committed: Committed<unknown>, origin?: CommitOrigin): Promise<void> {
    if (committed.effects.length > 0) await this.perform(committed.effects, committed, origin);
  }

  /** A commit whose decision may be stale by now (the run ended meanwhile): a CONFLICT is `null`, not an error. */
  async commitUnlessStale<T>(
    threadId: string,
    decide: Decide<T>,
    options: CommitOptions = {},
  ): Promise<Committed<T> | null> {
    let committed: Committed<T>;
    try {
      committed = await this.#write(threadId, decide, options);
    } catch (error) {
      if (PaiError.isInstance(error) && error.code === "CONFLICT") return null;
      throw error;
    }
    if (committed.effects.length > 0) await this.perform(committed.effects, committed, options.origin);
    return committed;
  }

  async #write<T>(threadId: string, decide: Decide<T>, options: CommitOptions): Promise<Committed<T>> {
    if (options.fence) await this.leases.assert(options.fence);
    let decision: Decision<T> | undefined;
    let lease: ReturnType<RunLeases["leaseForCommit"]> | undefined;
    let wake: string | null = null;
    const result = await this.store.transact(
      threadId,
      (snapshot, now) => {
        decision = decide(snapshot, now);
        if (!decision.ok) return decision;
        // Every commit keeps thread.wakeAt true to the state it writes (deadlines, schedules).
        if (decision.events.length === 0) return { ok: true, events: decision.events };
        const timed = withWakeAt(snapshot, decision.events, decision.after);
        wake = timed.moved ? timed.wakeAt : null;
        return { ok: true, events: timed.events, after: timed.after };
      },
      {
        ...(options.create ? { create: true } : {}),
        ...(options.fresh ? { fresh: options.fresh } : {}),
        lease: () => {
          const take =
            decision?.ok && this.takesLeases()
              ? decision.effects.find((effect) => effect.type === "take-lease")
              : undefined;
          lease = take?.type === "take-lease" ? this.leases.leaseForCommit(take.runId) : undefined;
          return lease;
        },
      },
    );
    if (lease) this.leases.taken(lease);
    const won = decision as Extract<Decision<T>, { ok: true }>;
    const effects: Effect[] = wake === null ? won.effects : [...won.effects, { type: "wake-at", at: wake }];
    return { ...result, value: won.value, effects };
  }
}
