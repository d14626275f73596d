import { inputSchema, outputSchema, outputValue, progressSchema, type ToolSpec } from "./tool-specs.ts";

function toolOne(spec: ToolSpec): string {
  const { index: i } = spec;
  let body = `  description: "Generated tool ${i}.",\n  inputSchema: ${inputSchema(spec)},\n  outputSchema: ${outputSchema(spec)},\n`;
  if (spec.context) body += "  contextSchema: z.object({ tenant: z.string() }),\n";
  if (!spec.clientTool) {
    const id = spec.context ? `\`\${context.tenant}:\${input.query${i}}\`` : `input.query${i}`;
    const args = spec.context ? "input, { context }" : "input";
    body += `  execute: async (${args}) => (${outputValue(spec, id)}),\n`;
  }
  return `export const ${spec.name} = tool({\n${body}});\n`;
}

/**
 * `agent.ts`: the same schemas with the plain AI SDK `tool()` and the UI message type of the
 * tool set (suspend points become approval requests, data channels a `progress` data part).
 */
export function sdkAgentSource(specs: ToolSpec[]): string {
  return [
    'import { type InferUITools, tool, type UIMessage } from "ai";',
    'import { z } from "zod";',
    "",
    ...specs.map(toolOne),
    `export const tools = { ${specs.map((spec) => spec.name).join(", ")} };`,
    "",
    `type Progress = z.output<typeof progress>;`,
    `const progress = ${progressSchema};`,
    "export type AppMessage = UIMessage<unknown, { progress: Progress }, InferUITools<typeof tools>>;",
    "",
  ].join("\n");
}

function renderOne(spec: ToolSpec): string {
  const { index: i, name } = spec;
  const lines = [
    `async function render${i}(part: Part): Promise<string | null> {`,
    `  if (part.type !== "tool-${name}") return null;`,
  ];
  if (spec.clientTool) {
    lines.push(
      `  if (part.state === "input-available") await addToolOutput({ tool: "${name}", toolCallId: part.toolCallId, output: ${outputValue(spec, `part.input.query${i}`)} });`,
    );
  }
  lines.push(
    `  if (part.state === "input-available") return part.input.query${i};`,
    `  if (part.state === "output-available") return part.output.id${i};`,
  );
  if (spec.suspendPoints.length > 0) {
    lines.push(
      `  if (part.state === "approval-requested") addToolApprovalResponse({ id: part.approval.id, approved: part.input.exact${i} });`,
    );
  }
  lines.push("  return null;", "}");
  return lines.join("\n");
}

/**
 * `client.ts`: the same render function per tool over a UI message's parts, narrowed with
 * `part.type`; approvals and client tool outputs go through the `Chat` callbacks' types.
 */
export function sdkClientSource(specs: ToolSpec[]): string {
  return [
    'import type { ChatAddToolApproveResponseFunction, ChatAddToolOutputFunction } from "ai";',
    'import type { AppMessage } from "./agent";',
    "",
    "declare const messages: AppMessage[];",
    "declare const addToolOutput: ChatAddToolOutputFunction<AppMessage>;",
    "declare const addToolApprovalResponse: ChatAddToolApproveResponseFunction;",
    'type Part = AppMessage["parts"][number];',
    "",
    ...specs.map(renderOne),
    `const renderers = [${specs.map((spec) => `render${spec.index}`).join(", ")}];`,
    "",
    "export async function handle(): Promise<string[]> {",
    "  const out: string[] = [];",
    "  for (const message of messages) {",
    "    for (const part of message.parts) {",
    '      if (part.type === "text") out.push(part.text);',
    '      if (part.type === "data-progress") out.push(String(part.data.pct));',
    "      for (const render of renderers) {",
    "        const text = await render(part);",
    "        if (text !== null) out.push(text);",
    "      }",
    "    }",
    "  }",
    "  return out;",
    "}",
    "",
  ].join("\n");
}
