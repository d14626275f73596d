import {
  type AnyToolDefinition,
  type BoundChildTool,
  type ChildContextIntersection,
  defineTool,
  type JsonValue,
  type ToolDefinition,
  type ToolDescriptionMetadata,
  type ToolRegistration,
} from "@pai/core";
import { asSchema, jsonSchema } from "ai";
import { invalidCodeModeOption } from "./errors.js";
import { type ProgramLimits, runProgram } from "./run-program.js";

/** Limits of one program run. */
export type CodeModeLimits = {
  /** Wall-clock limit of the whole program, including awaited tool calls. Default 10 s. */
  timeoutMs?: number;
  /** Memory a program may use, on top of the interpreter's fixed 16 MiB baseline. Default 32 MiB. */
  memoryBytes?: number;
  /** QuickJS stack limit in bytes. Default 512 KiB. */
  maxStackBytes?: number;
  /** `console.log` lines kept in the output. Default 100. */
  maxLogLines?: number;
};

/** What the model receives from a successful program. */
export type CodeModeOutput = {
  /** The program's return value (JSON). */
  result: JsonValue;
  /** Lines the program wrote with `console.log`. */
  logs: string[];
};

/** The child tools map: definitions or `{ tool, enabled?, mapContext?, onOutput? }` registrations. */
export type CodeModeChildren = Record<string, AnyToolDefinition | ToolRegistration>;

type ChildDefinitions<TTools extends CodeModeChildren> = {
  [K in keyof TTools]: TTools[K] extends { readonly tool: infer TTool extends AnyToolDefinition }
    ? TTool
    : TTools[K];
};

/** The public contract of a code-mode tool. */
export type CodeModeContract<TId extends string> = {
  id: TId;
  name: string;
  hasExecute: true;
  input: { code: string };
  output: CodeModeOutput;
  data: {};
  suspend: {};
};

/** The definition `codeModeTool` returns: an ordinary tool with declared children. */
export type CodeModeTool<TId extends string, TTools extends CodeModeChildren> = ToolDefinition<
  CodeModeContract<TId>,
  ChildContextIntersection<ChildDefinitions<TTools>>,
  {},
  ChildDefinitions<TTools>,
  ReturnType<typeof codeInputSchema>
>;

export type CodeModeToolOptions<TId extends string, TTools extends CodeModeChildren> = {
  /** Stable tool id, e.g. `"app.code"`. */
  id: TId;
  /** The explicit allowlist of tools the program may call (spec: Nested Tool Calls). */
  tools: TTools;
  /** Text before the generated API reference. */
  description?: string;
  limits?: CodeModeLimits;
};

const DEFAULT_LIMITS: ProgramLimits = {
  timeoutMs: 10_000,
  memoryBytes: 32 * 1024 * 1024,
  maxStackBytes: 512 * 1024,
  maxLogLines: 100,
};

const DEFAULT_DESCRIPTION =
  "Run a JavaScript program that calls the tools below and returns a JSON result. Use it to combine several tool calls, loop, or compute over their results in one step.";

const codeInputSchema = () =>
  jsonSchema<{ code: string }>(
    {
      type: "object",
      properties: {
        code: {
          type: "string",
          description:
            "The body of an async JavaScript function: call `await tools.<name>(input)` and `return` a JSON-serializable result.",
        },
      },
      required: ["code"],
      additionalProperties: false,
    },
    {
      validate: (value) =>
        typeof value === "object" &&
        value !== null &&
        typeof (value as { code?: unknown }).code === "string" &&
        Object.keys(value).every((key) => key === "code")
          ? { success: true, value: value as { code: string } }
          : { success: false, error: new Error("Expected { code: string }.") },
    },
  );

const resolvedSchemas = new WeakMap<object, unknown>();

/** A schema's JSON Schema text for the description; async converters fill in on a later step. */
function schemaText(schema: unknown): string {
  if (!schema) return "any";
  const sdk = asSchema(schema as Parameters<typeof asSchema>[0]);
  const cached = resolvedSchemas.get(sdk);
  if (cached) return JSON.stringify(cached);
  const json = sdk.jsonSchema;
  if (typeof (json as PromiseLike<unknown>).then === "function") {
    void Promise.resolve(json).then((value) => resolvedSchemas.set(sdk, value));
    return "object";
  }
  return JSON.stringify(json);
}

function describe(
  intro: string,
  tools: Readonly<Record<string, ToolDescriptionMetadata | undefined>>,
  timeoutMs: number,
): string {
  const entries = Object.entries(tools).filter(
    (entry): entry is [string, ToolDescriptionMetadata] => entry[1] !== undefined,
  );
  const api = entries.map(
    ([name, meta]) =>
      `- tools.${name}(input): ${meta.description}\n  input JSON Schema: ${schemaText(meta.inputSchema)}${
        meta.outputSchema ? `\n  resolves to JSON Schema: ${schemaText(meta.outputSchema)}` : ""
      }`,
  );
  return [
    intro,
    "",
    "The program is the body of an async function running in an isolated JavaScript sandbox (no network, files, timers or imports).",
    "Each tool is an async function taking one JSON input; a failed call rejects with an Error whose message explains why.",
    `Return the final result with \`return\`; console.log lines are returned too. The program is stopped after ${timeoutMs} ms.`,
    "",
    entries.length > 0 ? "Available tools:" : "No tools are available right now.",
    ...api,
  ].join("\n");
}

function positive(name: string, value: number): number {
  if (!Number.isFinite(value) || value <= 0)
    throw invalidCodeModeOption(`limits.${name} must be a positive number.`);
  return value;
}

/**
 * A tool that lets the model submit a JavaScript program calling an explicit set of child
 * tools. The program runs in QuickJS compiled to WebAssembly with time and memory limits and
 * sees only those tools, as async functions. Child calls go through `ctx.tools`, so they keep
 * their validation, availability, capabilities and cancellation; only the outer call is durable.
 * Limit breaches and program errors are model-visible failures (`ctx.fail`).
 *
 * @example
 * const code = codeModeTool({ id: "app.code", tools: { report, forecast }, limits: { timeoutMs: 5_000 } });
 * const agent = defineAgent({ tools: { code } });
 */
export function codeModeTool<const TId extends string, const TTools extends CodeModeChildren>(
  options: CodeModeToolOptions<TId, TTools>,
): CodeModeTool<TId, TTools> {
  if (!options?.tools || typeof options.tools !== "object" || Object.keys(options.tools).length === 0) {
    throw invalidCodeModeOption(
      "tools must name at least one child tool: codeModeTool({ id, tools: { report } }).",
    );
  }
  for (const name of Object.keys(options.tools)) {
    if (!/^[A-Za-z_$][A-Za-z0-9_$]*$/.test(name)) {
      throw invalidCodeModeOption(
        `child tool name "${name}" is not a JavaScript identifier; the program calls it as tools.${name}(). Rename the registration.`,
      );
    }
  }
  const limits: ProgramLimits = {
    timeoutMs: positive("timeoutMs", options.limits?.timeoutMs ?? DEFAULT_LIMITS.timeoutMs),
    memoryBytes: positive("memoryBytes", options.limits?.memoryBytes ?? DEFAULT_LIMITS.memoryBytes),
    maxStackBytes: positive("maxStackBytes", options.limits?.maxStackBytes ?? DEFAULT_LIMITS.maxStackBytes),
    maxLogLines: positive("maxLogLines", options.limits?.maxLogLines ?? DEFAULT_LIMITS.maxLogLines),
  };
  const intro = options.description ?? DEFAULT_DESCRIPTION;
  const config = {
    id: options.id,
    description: ({ tools }: { tools: Readonly<Record<string, ToolDescriptionMetadata | undefined>> }) =>
      describe(intro, tools, limits.timeoutMs),
    inputSchema: codeInputSchema(),
    tools: options.tools,
    execute: async (ctx: {
      input: { code: string };
      tools: Readonly<Record<string, BoundChildTool>>;
      signal: AbortSignal;
      fail(message: string): unknown;
    }) => {
      const functions = Object.fromEntries(
        Object.entries(ctx.tools)
          .filter(([, child]) => child.enabled)
          .map(([name, child]) => [
            name,
            (input: unknown, signal: AbortSignal) =>
              child.execute(input as never, { abortSignal: AbortSignal.any([ctx.signal, signal]) }),
          ]),
      );
      const outcome = await runProgram({ code: ctx.input.code, functions, limits, signal: ctx.signal });
      // A cancelled run is the runtime's to record, not a failure the tool decided on.
      if (!outcome.ok && outcome.reason === "aborted") throw ctx.signal.reason ?? new Error(outcome.message);
      if (!outcome.ok) {
        const logs = outcome.logs.length > 0 ? ` Logs before it stopped:\n${outcome.logs.join("\n")}` : "";
        return ctx.fail(`${outcome.message}${logs}`);
      }
      return { result: outcome.result as JsonValue, logs: outcome.logs } satisfies CodeModeOutput;
    },
  };
  // defineTool checks the children (backend tools only, no suspension, no nesting).
  return defineTool(config as never) as unknown as CodeModeTool<TId, TTools>;
}
