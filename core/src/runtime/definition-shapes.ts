import type { LanguageModel } from "ai";
import type { AnyCapability } from "../capabilities/capability.js";
import type { ToolSchema } from "../definitions/schema.js";

/**
 * The runtime's view of definitions: what `defineTool` / `defineAgent` return, seen without
 * their type-level contracts. The runtime reads only these fields.
 */
export type RuntimeResolverArgs = {
  runtimeContext: unknown;
  identity: unknown;
  scope: { scopeKey: string; userKey?: string | null };
  clientData: unknown;
  threadId: string;
  signal: AbortSignal;
};

export type RuntimeToolRegistration = {
  tool: RuntimeToolDefinition;
  enabled?: boolean | ((args: RuntimeResolverArgs) => boolean | Promise<boolean>);
  mapContext?: (args: RuntimeResolverArgs) => unknown;
  onOutput?: (
    args: RuntimeResolverArgs & {
      input: unknown;
      output: unknown;
      tool: { name: string };
      call: { toolCallId: string };
    },
  ) => unknown;
};

export type RuntimeToolDefinition = {
  kind: "tool";
  id: string;
  config: {
    description: string | ((args: { context: unknown; tools: Record<string, unknown> }) => string);
    inputSchema: ToolSchema;
    outputSchema?: ToolSchema;
    toModelOutput?: (args: { toolCallId: string; input: unknown; output: unknown }) => unknown;
    contextSchema?: unknown;
    suspend?: Record<string, { suspendSchema: ToolSchema; resumeSchema: ToolSchema; approval?: boolean }>;
    dataSchemas?: Record<string, ToolSchema>;
  };
  capabilities: Record<string, AnyCapability>;
  tools?: Record<string, RuntimeToolRegistration>;
  execute?: (ctx: any) => unknown;
};

export type AfterToolResultResult =
  | { type: "output"; output: unknown }
  | { type: "error"; errorText: string };

export type RuntimeAgentDefinition = {
  kind: "agent";
  name?: string;
  tools: Record<string, RuntimeToolRegistration>;
  runtimeContext?: (args: Omit<RuntimeResolverArgs, "runtimeContext">) => unknown;
  instructions?: string | ((args: RuntimeResolverArgs) => string | Promise<string>);
  model?: LanguageModel;
  maxSteps?: number;
  lifecycle?: {
    afterToolResult?: (
      args: RuntimeResolverArgs & {
        toolName: string;
        name: string;
        toolCallId: string;
        parent?: { toolName: string; toolCallId: string };
        input: unknown;
        result: AfterToolResultResult;
      },
    ) => AfterToolResultResult | undefined | void | Promise<AfterToolResultResult | undefined | void>;
  };
  mapError?: (args: {
    error: unknown;
    toolName: string;
    toolCallId: string;
    parent?: { toolName: string; toolCallId: string };
  }) => string | undefined;
};

/** The tenant a run works for (the service derives it from the request's identity). */
export type RuntimeScope = { scopeKey: string; userKey?: string | null };

/** Hooks installed on the runtime, applied to every agent (before an agent's own `afterToolResult`; after its own `mapError`). */
export type RuntimeHooks = {
  afterToolResult?: NonNullable<RuntimeAgentDefinition["lifecycle"]>["afterToolResult"];
  mapError?: RuntimeAgentDefinition["mapError"];
};
