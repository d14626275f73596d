import type { FlexibleSchema, InferSchema, Schema } from "ai";
import type { z } from "zod";
import type { DeadlineInput } from "./deadline.js";
import type { ToolSchema } from "./schema.js";

/** A schema built with the AI SDK's `jsonSchema<T>()`; `T` is the parsed type. */
export type JsonSchemaToolSchema<T = unknown> = Schema<T>;

/** Any Zod 4 schema (classic or mini). */
export type ZodToolSchema = z.core.$ZodType;

/**
 * The parsed (output) type of a tool schema: `z.output` for Zod, the declared type for
 * `jsonSchema<T>()`, the output type for other Standard Schemas, `unknown` otherwise.
 */
export type ParsedToolSchema<TSchema> = TSchema extends ZodToolSchema
  ? z.output<TSchema>
  : TSchema extends FlexibleSchema<any>
    ? InferSchema<TSchema>
    : unknown;

/**
 * The raw (input) type a caller passes before parsing: `z.input` for Zod, the Standard
 * Schema input type when declared, otherwise the parsed type.
 */
export type RawToolSchemaInput<TSchema> = TSchema extends ZodToolSchema
  ? z.input<TSchema>
  : TSchema extends { readonly "~standard": { readonly types?: infer TTypes } }
    ? NonNullable<TTypes> extends { readonly input: infer TInput }
      ? TInput
      : ParsedToolSchema<TSchema>
    : ParsedToolSchema<TSchema>;

/** One named wait point: the data shown while waiting, and the data needed to resume. */
export type SuspendPoint = {
  /** Data persisted and exposed to clients while the tool is waiting. */
  suspendSchema: ToolSchema;
  /** Data required from the client or external system to resume the tool. */
  resumeSchema: ToolSchema;
  /**
   * A yes/no approval: AI SDK chat clients show the call as `approval-requested` and answer it
   * with `addToolApprovalResponse`, which submits `{ approved, reason? }`, so `resumeSchema` must
   * accept that shape.
   */
  approval?: boolean;
  /**
   * How long each wait at this point may last (`ctx.suspend`'s `deadline` option overrides it
   * per call). When it passes, the action is cancelled or failed and the model reads the reason.
   */
  deadline?: DeadlineInput;
};

/** Named wait points of a tool. Requires `execute`. */
export type SuspendMap = Record<string, SuspendPoint>;

/** Tool-scoped data channels keyed by channel name. */
export type ToolDataSchemas = Record<string, ToolSchema>;

/** The type-level public contract of one tool. */
export type ToolContract = {
  /** Stable wire-spec identity; absent on provider-executed tools. */
  id?: string;
  /** Public tool name (the agent's registration key). */
  name: string;
  /** Whether the definition executes in the PAI backend. */
  hasExecute?: boolean;
  /** Parsed tool input. */
  input: unknown;
  /** Parsed tool output. */
  output: unknown;
  /** Tool-scoped data contracts keyed by channel. */
  data: Record<string, unknown>;
  /** Suspend/resume contracts keyed by suspend point name. */
  suspend: Record<string, { input: unknown; resume: unknown }>;
};

/** Parsed data contracts of `dataSchemas`. */
export type InferToolDataContracts<TData> =
  TData extends Record<string, ToolSchema>
    ? { [TName in keyof TData & string]: ParsedToolSchema<TData[TName]> }
    : {};

/** Parsed suspend/resume contracts of a `suspend` map. */
export type InferSuspendContracts<TSuspend> = TSuspend extends SuspendMap
  ? {
      [TName in keyof TSuspend & string]: {
        /** Parsed output of this wait point's `suspendSchema`. */
        input: ParsedToolSchema<TSuspend[TName]["suspendSchema"]>;
        /** Parsed output of this wait point's `resumeSchema`. */
        resume: ParsedToolSchema<TSuspend[TName]["resumeSchema"]>;
      };
    }
  : {};

/** Names of a contract's suspend points. */
export type SuspendName<TContract extends ToolContract> = keyof TContract["suspend"] & string;

/** The parsed output a tool's execute returns (or a client submits). */
export type ContractOutput<TContract extends ToolContract> = TContract["output"];

/**
 * Builds a contract from the pieces `defineTool` infers. Tools without execute always have
 * an empty suspend map: only a backend execute can enter a wait point.
 */
export type BuildToolContract<
  TId,
  TInputSchema,
  TOutputSchema,
  TData,
  TSuspend,
  THasExecute extends boolean,
> = {
  id: TId;
  name: string;
  hasExecute: THasExecute;
  input: ParsedToolSchema<TInputSchema>;
  output: TOutputSchema extends ToolSchema ? ParsedToolSchema<TOutputSchema> : unknown;
  data: InferToolDataContracts<TData>;
  suspend: THasExecute extends true ? InferSuspendContracts<TSuspend> : {};
};
