import { getErrorMessage, PaiError } from "../errors/pai-error.js";
import { normalizeJson } from "../json/json-value.js";
import type { ClientToolSnapshot } from "../state/rows.js";

/** Names PAI keeps for itself; frontend-defined tools cannot use them. */
export const RESERVED_TOOL_NAME = /^(pai[._-]|__)/i;

/**
 * Structural validation of a request's frontend-defined client tools (spec 03): names that are
 * valid, unreserved and distinct from backend tools; serializable definitions with JSON Schema
 * objects; a bounded snapshot size. The definitions are untrusted model context only.
 */
export function validateClientToolSnapshot(
  tools: ClientToolSnapshot[] | undefined,
  options: { backendTools: Record<string, unknown>; maxBytes: number },
): ClientToolSnapshot[] {
  if (!tools || tools.length === 0) return [];
  const limit = options.maxBytes;
  let serialized: string;
  try {
    serialized = JSON.stringify(normalizeJson(tools, "Client tools"));
  } catch (error) {
    throw new PaiError(
      "INVALID_INPUT",
      `Client tool definitions must be serializable: ${getErrorMessage(error)}`,
    );
  }
  if (new TextEncoder().encode(serialized).length > limit) {
    throw new PaiError(
      "PAYLOAD_TOO_LARGE",
      `The client tool snapshot is larger than ${limit} bytes. Send fewer or smaller client tool definitions.`,
    );
  }
  const seen = new Set<string>();
  for (const tool of tools) {
    if (typeof tool?.name !== "string" || !/^[A-Za-z0-9_.-]{1,64}$/.test(tool.name)) {
      throw new PaiError(
        "INVALID_INPUT",
        `Client tool name ${JSON.stringify(tool?.name)} is invalid: use 1-64 letters, digits, "_", "-" or ".".`,
      );
    }
    if (RESERVED_TOOL_NAME.test(tool.name)) {
      throw new PaiError(
        "INVALID_INPUT",
        `Client tool name "${tool.name}" is reserved. Choose another name.`,
      );
    }
    if (Object.hasOwn(options.backendTools, tool.name)) {
      throw new PaiError(
        "INVALID_INPUT",
        `Client tool "${tool.name}" conflicts with a backend tool of the same name. Rename the client tool.`,
      );
    }
    if (seen.has(tool.name))
      throw new PaiError("INVALID_INPUT", `Client tool "${tool.name}" is declared twice.`);
    seen.add(tool.name);
    if (typeof tool.description !== "string") {
      throw new PaiError("INVALID_INPUT", `Client tool "${tool.name}" needs a string description.`);
    }
    for (const key of ["inputSchema", "outputSchema"] as const) {
      const schema = tool[key];
      if (key === "outputSchema" && schema === undefined) continue;
      if (typeof schema !== "object" || schema === null || Array.isArray(schema)) {
        throw new PaiError(
          "INVALID_INPUT",
          `Client tool "${tool.name}" ${key} must be a JSON Schema object.`,
        );
      }
    }
  }
  return tools.map((tool) => ({
    name: tool.name,
    description: tool.description,
    inputSchema: tool.inputSchema,
    ...(tool.outputSchema ? { outputSchema: tool.outputSchema } : {}),
  }));
}
