import { PaiError } from "../errors/pai-error.js";
import type { ToolResolverArgs } from "./resolver-args.js";
import type {
  AnyToolDefinition,
  ChildContextIntersection,
  NormalizedToolRegistration,
  ToolContextOf,
  ToolRegistrationInput,
} from "./tool-types.js";

type NeedsMapContext<TTool, TRuntimeContext> = [TRuntimeContext] extends [ToolContextOf<TTool>]
  ? false
  : true;

/**
 * True when a tool's context is only the one its children require (a parent without its own
 * `contextSchema`). For an agent without `runtimeContext`, `defineAgent` enforces a tool's own
 * `contextSchema` only, and so does this check.
 */
type ContextFromChildren<TTool> = TTool extends { readonly tools?: infer TChildren }
  ? [ToolContextOf<TTool>] extends [ChildContextIntersection<NonNullable<TChildren>>]
    ? [ChildContextIntersection<NonNullable<TChildren>>] extends [ToolContextOf<TTool>]
      ? true
      : false
    : false
  : false;

type NeedsMapContextFrom<TTool, TCheckContext, TSource extends string> =
  NeedsMapContext<TTool, TCheckContext> extends true
    ? TSource extends "no runtimeContext"
      ? ContextFromChildren<TTool> extends true
        ? false
        : true
      : true
    : false;

/** Required when the registering side's context does not satisfy the tool's `contextSchema`. */
export type MapContextRequired<TTool, TRuntimeContext> = {
  mapContext: (
    args: ToolResolverArgs<TRuntimeContext>,
  ) => ToolContextOf<TTool> | Promise<ToolContextOf<TTool>>;
};

/**
 * What is wrong with `THave` as the context `TNeed` declares: `missing:<field>` per required
 * field it lacks, `type:<field>` per field of another type, else `other`.
 */
type ContextFieldProblems<TNeed, THave> = [
  {
    [F in keyof TNeed & string]-?: F extends keyof THave
      ? [THave[F]] extends [TNeed[F]]
        ? never
        : `type:${F}`
      : {} extends Pick<TNeed, F>
        ? never
        : `missing:${F}`;
  }[keyof TNeed & string],
] extends [infer TProblem extends string]
  ? [TProblem] extends [never]
    ? "other"
    : TProblem
  : "other";

/**
 * One line of the compile error of a registration that needs `mapContext`. `TSource` names
 * where the registering side's context comes from; `"no runtimeContext"` marks an agent
 * without one.
 */
type MissingContextMessage<
  TName extends string,
  TProblem,
  TSource extends string,
> = `PAI: tool '${TName}' needs ${TProblem extends `${"missing" | "type"}:${infer F}`
  ? `context field '${F}'`
  : "a context"}${TSource extends "no runtimeContext"
  ? ", but the agent has no runtimeContext. Add one that returns it"
  : TProblem extends `missing:${string}`
    ? `, which ${TSource} lacks. Add it there`
    : TProblem extends `type:${string}`
      ? ` with another type than ${TSource} gives. Fix it there`
      : ` that ${TSource} does not satisfy. Fix it there`}, or register the tool as { tool, mapContext }.`;

/**
 * The `tools` input of `defineAgent` / `defineTool`. `TTools` (definitions per key) is
 * inferred from the second member; the first demands `mapContext` for every entry whose
 * declared context `TCheckContext` does not satisfy, and names the fields at fault.
 *
 * `TCheckContext` is kept separate from the callbacks' context because TypeScript checks
 * the call once before context-sensitive callbacks (like `runtimeContext`) are inferred;
 * passing `never` while unknown keeps that first check lenient. `TSource` names where the
 * context comes from in error messages (`"no runtimeContext"` for an agent without one).
 */
export type ToolRegistrationsInput<
  TTools extends Record<string, AnyToolDefinition>,
  TRuntimeContext,
  TCheckContext = TRuntimeContext,
  TSource extends string = "the runtimeContext",
> = {
  [K in keyof TTools as NeedsMapContextFrom<TTools[K], TCheckContext, TSource> extends true ? K : never]: {
    // Written inline (not as an alias) so that TypeScript prints the keys themselves, and first
    // so that they lead the first line of the error. They are optional and never present:
    // `{ tool, mapContext }` satisfies them; only a registration without `mapContext` fails.
    readonly [TProblem in ContextFieldProblems<
      ToolContextOf<TTools[K]>,
      TCheckContext
    > as MissingContextMessage<K & string, TProblem, TSource>]?: never;
  } & MapContextRequired<TTools[K], TRuntimeContext>;
} & {
  [K in keyof TTools]: ToolRegistrationInput<TTools[K], TRuntimeContext>;
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
