declare const facadeType: unique symbol;

/**
 * A capability token: a runtime-bound service a tool declares it needs. The token carries
 * its facade type only at the type level; the implementation is bound at
 * `createAgentRuntime({ capabilities: { [token.id]: binding } })`.
 */
export type Capability<TId extends string = string, TFacade = unknown> = {
  readonly kind: "capability";
  readonly id: TId;
  readonly description?: string;
  readonly [facadeType]?: TFacade;
};

export type AnyCapability = Capability<string, any>;

/** A tool's capability declarations, keyed by the tool-local ctx name (aliasable). */
export type CapabilityMap = Record<string, AnyCapability>;

/** The facade type a capability token stands for. */
export type CapabilityFacade<T> = T extends Capability<string, infer TFacade> ? TFacade : never;

/** `ctx.capabilities`: facades keyed by the declared ctx names. */
export type CapabilityFacades<T extends CapabilityMap> = { readonly [K in keyof T]: CapabilityFacade<T[K]> };

/**
 * Declares a capability token. The facade type is given explicitly; the id is inferred as
 * a literal: `const sandbox = defineCapability<SandboxFacade>()({ id: "pai.sandbox" })`.
 */
export function defineCapability<TFacade>() {
  return <const TId extends string>(config: { id: TId; description?: string }): Capability<TId, TFacade> => {
    if (typeof config?.id !== "string" || config.id.trim() === "" || config.id.trim() !== config.id) {
      throw new TypeError(
        `defineCapability: id must be a non-empty string without surrounding whitespace (got ${JSON.stringify(config?.id)}).`,
      );
    }
    return Object.freeze({
      kind: "capability" as const,
      id: config.id,
      ...(config.description ? { description: config.description } : {}),
    }) as Capability<TId, TFacade>;
  };
}
