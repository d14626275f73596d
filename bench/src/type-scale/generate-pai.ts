import {
  inputSchema,
  outputSchema,
  outputValue,
  progressSchema,
  resumeSchema,
  suspendSchema,
  type ToolSpec,
} from "./tool-specs.ts";

/**
 * How the client narrows a message part to one tool: the per-tool guard the docs teach
 * (`isToolPart`), a bare `part.type` comparison (`type`), or the deprecated catch-all guard
 * followed by a `type` comparison (`isPaiToolPart`, what the docs taught before).
 */
export type PaiNarrowing = "isToolPart" | "type" | "isPaiToolPart";

function execute(spec: ToolSpec): string {
  const { index: i, suspendPoints } = spec;
  const lines: string[] = [];
  if (suspendPoints.length > 0) {
    lines.push(
      `    if (ctx.entry.type === "initial") return ctx.suspend("point0", { prompt: ctx.input.query${i}, level: ctx.input.limit${i} });`,
    );
    for (let point = 1; point < suspendPoints.length; point++) {
      lines.push(
        `    if (ctx.entry.type === "resume" && ctx.entry.name === "point${point - 1}" && !ctx.entry.resume.approved) return ctx.suspend("point${point}", { prompt: ctx.entry.resume.note ?? "", level: ${point} });`,
      );
    }
  }
  if (spec.data) lines.push(`    await ctx.data.write("progress", { step: ctx.input.mode${i}, pct: 50 });`);
  let id = `ctx.input.query${i}`;
  if (spec.capability) {
    lines.push(`    const run = await ctx.capabilities.sandbox.run({ command: ctx.input.query${i} });`);
    id = "run.stdout";
  }
  if (spec.context) id = `\`\${ctx.context.tenant}:\${${id}}\``;
  lines.push(`    return ${outputValue(spec, id)};`);
  return `  execute: async (ctx) => {\n${lines.join("\n")}\n  },\n`;
}

function defineOne(spec: ToolSpec): string {
  let body = `  id: "bench.${spec.name}.v1",\n  description: "Generated tool ${spec.index}.",\n`;
  body += `  inputSchema: ${inputSchema(spec)},\n  outputSchema: ${outputSchema(spec)},\n`;
  if (spec.context) body += "  contextSchema: z.object({ tenant: z.string() }),\n";
  if (spec.data) body += `  dataSchemas: { progress: ${progressSchema} },\n`;
  if (spec.capability) body += "  capabilities: { sandbox },\n";
  if (spec.suspendPoints.length > 0) {
    const points = spec.suspendPoints.map(
      (point) => `    ${point}: { suspendSchema: ${suspendSchema}, resumeSchema: ${resumeSchema} },\n`,
    );
    body += `  suspend: {\n${points.join("")}  },\n`;
  }
  if (!spec.clientTool) body += execute(spec);
  return `export const ${spec.name} = defineTool({\n${body}});\n`;
}

/** `agent.ts`: every tool defined with `defineTool`, registered on one agent with a runtime context. */
export function paiAgentSource(specs: ToolSpec[]): string {
  return [
    'import { defineAgent, defineCapability, defineTool } from "@pai/core";',
    'import { z } from "zod";',
    "",
    "type Sandbox = { run(input: { command: string }): Promise<{ stdout: string }> };",
    'const sandbox = defineCapability<Sandbox>()({ id: "bench.sandbox" });',
    "",
    ...specs.map(defineOne),
    "export const agent = defineAgent({",
    '  name: "scale",',
    '  runtimeContext: async ({ scope }) => ({ tenant: scope.scopeKey, region: "eu" }),',
    `  tools: { ${specs.map((spec) => spec.name).join(", ")} },`,
    "});",
    "",
  ].join("\n");
}

function renderOne(spec: ToolSpec, narrowing: PaiNarrowing): string {
  const { index: i, name } = spec;
  const test = narrowing === "isToolPart" ? `!isToolPart(part, "${name}")` : `part.type !== "tool-${name}"`;
  const lines = [
    `async function render${i}(message: Message, part: ${narrowing === "isPaiToolPart" ? "ToolPart" : "Part"}): Promise<string | null> {`,
    `  if (${test}) return null;`,
    `  if (part.state === "input-available") return part.input.query${i};`,
    `  if (part.state === "output-available") return part.output.id${i};`,
  ];
  if (spec.suspendPoints.length > 0) {
    lines.push(
      `  if (part.pendingSuspension?.name === "point0") return part.pendingSuspension.input.prompt;`,
      "  const action = thread.getPendingAction(message, part);",
      `  if (action?.name === "${name}.point0") await action.submit({ approved: true });`,
    );
  }
  lines.push(spec.data ? "  return String(part.data.progress?.at(-1)?.value.pct);" : "  return null;", "}");
  return lines.join("\n");
}

function answerOne(spec: ToolSpec): string {
  if (spec.clientTool) {
    return `    case "${spec.name}.output":\n      return action.submit(${outputValue(spec, `action.input.query${spec.index}`)});`;
  }
  return spec.suspendPoints
    .map(
      (point) =>
        `    case "${spec.name}.${point}":\n      return action.submit({ approved: action.input.level > 0, note: action.input.prompt });`,
    )
    .join("\n");
}

/**
 * `client.ts`: a typed `@pai/client` thread. Each tool has a render function that narrows a
 * message part to its tool and reads it by state, data channel and pending suspension (as an
 * app renders one card per tool); pending actions are answered in a `switch` over their names.
 */
export function paiClientSource(specs: ToolSpec[], narrowing: PaiNarrowing): string {
  const guard = narrowing === "type" ? "" : ` ${narrowing},`;
  return [
    `import { createPaiClient,${guard} type PaiThreadMessage, type PaiTransport } from "@pai/client";`,
    'import type { agent } from "./agent";',
    "",
    "declare const transport: PaiTransport;",
    "const client = createPaiClient<typeof agent>({ transport });",
    'const thread = client.thread("thread-1");',
    "type Message = PaiThreadMessage<typeof agent>;",
    'type Part = Message["parts"][number];',
    ...(narrowing === "isPaiToolPart" ? ["type ToolPart = Extract<Part, { toolCallId: string }>;"] : []),
    "",
    ...specs.map((spec) => renderOne(spec, narrowing)),
    `const renderers = [${specs.map((spec) => `render${spec.index}`).join(", ")}];`,
    "",
    'type Action = ReturnType<typeof thread.getState>["pending"][number];',
    "function answer(action: Action) {",
    "  switch (action.name) {",
    ...specs.map(answerOne).filter(Boolean),
    "  }",
    "  return undefined;",
    "}",
    "",
    "export async function handle(): Promise<string[]> {",
    "  const out: string[] = [];",
    "  const state = thread.getState();",
    "  for (const message of state.messages) {",
    "    for (const part of message.parts) {",
    '      if (part.type === "text") out.push(part.text);',
    ...(narrowing === "isPaiToolPart" ? ["      if (!isPaiToolPart(part)) continue;"] : []),
    "      for (const render of renderers) {",
    "        const text = await render(message, part);",
    "        if (text !== null) out.push(text);",
    "      }",
    "    }",
    "  }",
    "  for (const action of state.pending) await answer(action);",
    '  await thread.action("tool0.point0")?.submit({ approved: false });',
    "  return out;",
    "}",
    "",
  ].join("\n");
}
