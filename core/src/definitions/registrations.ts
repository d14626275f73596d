import { PaiError } from "../errors/pai-error.js";
import type { ToolResolverArgs } from "./resolver-args.js";
import type {
  AnyToolDefinition,
  NormalizedToolRegistration,
  ToolContextOf,
  ToolRegistrationInput,
} from "./tool-types.js";

type NeedsMapContext<TTool, TRuntimeContext> = [TRuntimeContext] extends [ToolContextOf<TTool>]
  ? false
  : true;

/** Required when the registering side's context does not satisfy the tool's `contextSchema`. */
export type MapContextRequired<TTool, TRuntimeContext> = {
  mapContext: (
    args: ToolResolverArgs<TRuntimeContext>,
  ) => ToolContextOf<TTool> | Promise<ToolContextOf<TTool>>;
};

/**
 * The `tools` input of `defineAgent` / `defineTool`. `TTools` (definitions per key) is
 * inferred from the first member; the second member demands `mapContext` for every entry
 * whose declared context `TCheckContext` does not satisfy.
 *
 * `TCheckContext` is kept separate from the callbacks' context because TypeScript checks
 * the call once before context-sensitive callbacks (like `runtimeContext`) are inferred;
 * passing `never` while unknown keeps that first check lenient.
 */
export type ToolRegistrationsInput<
  TTools extends Record<string, AnyToolDefinition>,
  TRuntimeContext,
  TCheckContext = TRuntimeContext,
> = {
  [K in keyof TTools]: ToolRegistrationInput<TTools[K], TRuntimeContext>;
} & {
  [K in keyof TTools as NeedsMapContext<TTools[K], TCheckContext> extends true
    ? K
    : never]: MapContextRequired<TTools[K], TRuntimeContext>;
};

/** True for a value produced by `defineTool`. */
export function isToolDefinition(value: unknown): value is AnyToolDefinition {
  return typeof value === "object" && value !== null && (value as { kind?: unknown }).kind === "tool";
}

/**
 * Normalizes a registration map: bare definitions become `{ tool }`. `where` names the
 * owner in error messages (`defineAgent` / `defineTool("id")`).
 */
export function normalizeRegistrations(
  tools: Record<string, unknown>,
  where: string,
): Record<string, NormalizedToolRegistration> {
  if (typeof tools !== "object" || tools === null || Array.isArray(tools)) {
    throw new PaiError(
      "INVALID_DEFINITION",
      `${where}: tools must be an object mapping registration names to tool definitions or { tool } registrations.`,
    );
  }
  const normalized: Record<string, NormalizedToolRegistration> = {};
  for (const [name, value] of Object.entries(tools)) {
    if (name.trim() === "") {
      throw new PaiError(
        "INVALID_DEFINITION",
        `${where}: a tool registration name is empty. Use a stable, non-empty name such as "lookupCustomer".`,
      );
    }
    const registration = isToolDefinition(value)
      ? { tool: value }
      : (value as Partial<NormalizedToolRegistration>);
    if (typeof registration !== "object" || registration === null || !isToolDefinition(registration.tool)) {
      throw new PaiError(
        "INVALID_DEFINITION",
        `${where}: registration "${name}" is not a tool definition. Pass a defineTool() result or { tool: definition, ... }.`,
      );
    }
    if (
      registration.enabled !== undefined &&
      typeof registration.enabled !== "boolean" &&
      typeof registration.enabled !== "function"
    ) {
      throw new PaiError(
        "INVALID_DEFINITION",
        `${where}: registration "${name}" has an enabled value that is neither a boolean nor a function.`,
      );
    }
    for (const key of ["mapContext", "onOutput"] as const) {
      if (registration[key] !== undefined && typeof registration[key] !== "function") {
        throw new PaiError(
          "INVALID_DEFINITION",
          `${where}: registration "${name}" has a ${key} that is not a function.`,
        );
      }
    }
    normalized[name] = Object.freeze({
      tool: registration.tool,
      ...(registration.enabled !== undefined ? { enabled: registration.enabled } : {}),
      ...(registration.mapContext ? { mapContext: registration.mapContext } : {}),
      ...(registration.onOutput ? { onOutput: registration.onOutput } : {}),
    });
  }
  return Object.freeze(normalized);
}
