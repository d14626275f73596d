import type { JSONSchema7 } from "ai";
import type { AnyAgentDefinition } from "../definitions/agent-types.js";
import { toJsonSchema } from "../definitions/schema.js";
import type { AnyToolDefinition } from "../definitions/tool-types.js";

/** Static description of one registered tool. Contains no server context and no callbacks. */
export type ToolManifestEntry = {
  /** The definition's stable wire-spec id. */
  id: string;
  /** Static description; `""` when the description is a callback (it needs runtime context). */
  description: string;
  inputSchema: JSONSchema7;
  outputSchema?: JSONSchema7;
  /** False when a client or external worker supplies the output. */
  hasExecute: boolean;
  /** Suspend points keyed by name (sorted). */
  suspend: Record<string, { suspendSchema: JSONSchema7; resumeSchema: JSONSchema7 }>;
  /** Tool data channels keyed by name (sorted). */
  dataChannels: Record<string, JSONSchema7>;
};

/** Static manifest of an agent: every registration, including disabled ones. */
export type AgentManifest = {
  /** Keyed by registration name, sorted. */
  tools: Record<string, ToolManifestEntry>;
  /** JSON Schema of the agent's message metadata, when declared. */
  messageMetadata?: JSONSchema7;
};

const sortedEntries = <T>(record: Record<string, T> | undefined): Array<[string, T]> =>
  Object.entries(record ?? {}).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));

/** The manifest entry of one definition. */
export async function toolManifestEntry(tool: AnyToolDefinition): Promise<ToolManifestEntry> {
  const suspend: ToolManifestEntry["suspend"] = {};
  for (const [name, point] of sortedEntries(tool.config.suspend)) {
    suspend[name] = {
      suspendSchema: await toJsonSchema(point.suspendSchema),
      resumeSchema: await toJsonSchema(point.resumeSchema),
    };
  }
  const dataChannels: ToolManifestEntry["dataChannels"] = {};
  for (const [name, schema] of sortedEntries(tool.config.dataSchemas)) {
    dataChannels[name] = await toJsonSchema(schema);
  }
  return {
    id: tool.id,
    description: typeof tool.config.description === "string" ? tool.config.description : "",
    inputSchema: await toJsonSchema(tool.config.inputSchema),
    ...(tool.config.outputSchema !== undefined
      ? { outputSchema: await toJsonSchema(tool.config.outputSchema) }
      : {}),
    hasExecute: typeof tool.execute === "function",
    suspend,
    dataChannels,
  };
}

/**
 * Builds the deterministic, JSON-serializable manifest of an agent: per registration name
 * the tool id, static description, JSON Schemas, execution mode, suspend points and data
 * channels. Disabled tools are listed too: availability is a runtime decision.
 */
export async function agentManifest(agent: AnyAgentDefinition): Promise<AgentManifest> {
  const tools: AgentManifest["tools"] = {};
  for (const [name, registration] of sortedEntries(agent.tools)) {
    tools[name] = await toolManifestEntry(registration.tool);
  }
  return {
    tools,
    ...(agent.messageMetadata !== undefined
      ? { messageMetadata: await toJsonSchema(agent.messageMetadata) }
      : {}),
  };
}
