/**
 * TEMPORARY stand-in for `defineTool` / `defineAgent` from `@pai/core` until the definition
 * layer lands. Produces the runtime shape the engine reads. Delete once the real ones exist.
 */
export function defineTool<const T extends { id: string; [key: string]: any }>(config: T): any {
  const {
    id,
    description,
    inputSchema,
    outputSchema,
    toModelOutput,
    contextSchema,
    suspend,
    dataSchemas,
    capabilities,
    tools,
    execute,
  } = config as Record<string, any>;
  const normalizedTools = tools
    ? Object.fromEntries(
        Object.entries(tools as Record<string, any>).map(([name, value]) => [
          name,
          value?.kind === "tool" ? { tool: value } : value,
        ]),
      )
    : undefined;
  return {
    kind: "tool",
    id,
    config: { description, inputSchema, outputSchema, toModelOutput, contextSchema, suspend, dataSchemas },
    capabilities: capabilities ?? {},
    ...(normalizedTools ? { tools: normalizedTools } : {}),
    ...(execute ? { execute } : {}),
  };
}

export function defineAgent<const T extends { [key: string]: any }>(config: T): any {
  const tools = Object.fromEntries(
    Object.entries((config.tools ?? {}) as Record<string, any>).map(([name, value]) => [
      name,
      value?.kind === "tool" ? { tool: value } : value,
    ]),
  );
  return { kind: "agent", ...config, tools };
}
