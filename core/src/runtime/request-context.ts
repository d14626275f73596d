import type { Scope } from "../definitions/identity.js";
import type { JsonValue } from "../json/json-value.js";
import type { RuntimeAgentDefinition, RuntimeResolverArgs } from "./definition-shapes.js";

/**
 * The trusted facts of the request a run is working for: identity, scope and untrusted
 * client data. Resolvers (`runtimeContext`, `enabled`, `mapContext`, `onOutput`) receive them.
 * `runtimeContext` is resolved lazily once per request context.
 */
export class RequestContext {
  #runtimeContext: Promise<unknown> | undefined;

  constructor(
    readonly agent: RuntimeAgentDefinition,
    readonly identity: unknown,
    readonly scope: Scope,
    readonly clientData: JsonValue | null,
    readonly threadId: string,
    readonly signal: AbortSignal,
  ) {}

  runtimeContext(): Promise<unknown> {
    if (!this.#runtimeContext) {
      const resolver = this.agent.runtimeContext;
      this.#runtimeContext = Promise.resolve(
        resolver
          ? resolver({
              identity: this.identity,
              scope: this.scope,
              clientData: this.clientData,
              threadId: this.threadId,
              signal: this.signal,
            })
          : undefined,
      );
    }
    return this.#runtimeContext;
  }

  async resolverArgs(): Promise<RuntimeResolverArgs> {
    return {
      runtimeContext: await this.runtimeContext(),
      identity: this.identity,
      scope: this.scope,
      clientData: this.clientData,
      threadId: this.threadId,
      signal: this.signal,
    };
  }
}
