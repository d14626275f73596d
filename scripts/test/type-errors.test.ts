import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import ts from "typescript";
import { beforeAll, describe, expect, it } from "vitest";

// The compile errors users hit most often must name the fix, not only fail. `@ts-expect-error`
// proves that an error exists (see core/test/types/definition-errors.test-d.ts and
// client/test/typed-client-errors.test-d.ts); this test proves what it says. It compiles small
// fixtures (held in memory, so `tsc -p` never sees their errors) with the repository tsconfig
// and asserts on the diagnostics' text.

const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
const FIXTURE_DIR = join(REPO_ROOT, "scripts/test/type-errors");

const fixtures: Record<string, string> = {
  "suspend-name.ts": `
import { defineTool } from "@pai/core";
import { z } from "zod";
export const deploy = defineTool({
  id: "test.deploy",
  description: "Deploy",
  inputSchema: z.object({ env: z.string() }),
  outputSchema: z.object({ ok: z.boolean() }),
  suspend: {
    approve: { suspendSchema: z.object({ prompt: z.string() }), resumeSchema: z.object({ approved: z.boolean() }) },
    confirm: { suspendSchema: z.object({ note: z.string() }), resumeSchema: z.object({ ok: z.boolean() }) },
  },
  execute: async (ctx) => {
    if (ctx.entry.type === "initial") return ctx.suspend("aprove", { prompt: "x" });
    return { ok: true };
  },
});
`,
  "thread-action.ts": `
import { defineAgent, defineTool } from "@pai/core";
import { createPaiClient, type PaiTransport } from "@pai/client";
import { z } from "zod";
const ask = defineTool({
  id: "test.ask",
  description: "Ask",
  inputSchema: z.object({}),
  outputSchema: z.object({ ok: z.boolean() }),
  suspend: {
    approve: { suspendSchema: z.object({ prompt: z.string() }), resumeSchema: z.object({ approved: z.boolean() }) },
    note: { suspendSchema: z.object({ note: z.string() }), resumeSchema: z.object({ text: z.string() }) },
  },
  execute: async (ctx) => ctx.suspend("approve", { prompt: "x" }),
});
const pick = defineTool({ id: "test.pick", description: "Pick", inputSchema: z.object({}), outputSchema: z.object({ n: z.number() }) });
const agent = defineAgent({ tools: { ask, pick } });
const thread = createPaiClient<typeof agent>({ transport: {} as PaiTransport }).thread("t");
export const answer = () => thread.action("unknown.name")?.submit({ approved: true });
`,
  "raw-submit.ts": `
import { createAgentRuntime, defineAgent, defineTool } from "@pai/core";
import { createPaiRouter } from "@pai/transport-trpc";
import { memoryStorage } from "@pai/storage-memory";
import { createTRPCClient, httpLink } from "@trpc/client";
import { initTRPC } from "@trpc/server";
import { z } from "zod";
const ask = defineTool({
  id: "test.ask",
  description: "Ask",
  inputSchema: z.object({}),
  outputSchema: z.object({ ok: z.boolean() }),
  suspend: {
    approve: { suspendSchema: z.object({ prompt: z.string() }), resumeSchema: z.object({ approved: z.boolean() }) },
  },
  execute: async (ctx) => ctx.suspend("approve", { prompt: "x" }),
});
const agent = defineAgent({ tools: { ask } });
const pai = createAgentRuntime({ agent, storage: memoryStorage(), model: {} as never, scope: () => ({ scopeKey: "s" }) });
const t = initTRPC.create();
const router = t.router({ pai: createPaiRouter({ procedure: t.procedure, service: pai.service, identity: () => ({}) }) });
const trpc = createTRPCClient<typeof router>({ links: [httpLink({ url: "http://localhost" })] });
export const wrongPayload = () =>
  trpc.pai.actions.submit.mutate({ threadId: "t", actionId: "a", name: "ask.approve", payload: { approved: "yes" } });
export const unknownName = () =>
  trpc.pai.actions.submit.mutate({ threadId: "t", actionId: "a", name: "ask.aprove", payload: { approved: true } });
`,
  "tool-context.ts": `
import { defineAgent, defineTool } from "@pai/core";
import { z } from "zod";
const deploy = defineTool({
  id: "test.deploy",
  description: "Deploy",
  contextSchema: z.object({ orgId: z.string(), userId: z.string() }),
  inputSchema: z.object({}),
  execute: async (ctx) => ctx.context.orgId,
});
export const missingField = defineAgent({
  runtimeContext: async ({ scope }) => ({ userId: scope.scopeKey }),
  tools: { deploy },
});
export const wrongType = defineAgent({
  runtimeContext: () => ({ orgId: 1, userId: "u" }),
  tools: { deploy },
});
export const noRuntimeContext = defineAgent({
  tools: { deploy },
});
export const child = defineTool({
  id: "test.parent",
  description: "Parent",
  contextSchema: z.object({ userId: z.string() }),
  inputSchema: z.object({}),
  tools: { deploy },
  execute: async () => null,
});
`,
};

type Diagnostic = { file: string; line: number; message: string };

let diagnostics: Diagnostic[] = [];

function compile(): Diagnostic[] {
  const config = ts.getParsedCommandLineOfConfigFile(join(REPO_ROOT, "tsconfig.json"), undefined, {
    ...ts.sys,
    onUnRecoverableConfigFileDiagnostic: (diagnostic) => {
      throw new Error(ts.flattenDiagnosticMessageText(diagnostic.messageText, "\n"));
    },
  });
  if (!config) throw new Error("tsconfig.json could not be read");
  const options = { ...config.options, noEmit: true };
  const files = new Map(Object.entries(fixtures).map(([name, text]) => [join(FIXTURE_DIR, name), text]));
  const host = ts.createCompilerHost(options);
  const { getSourceFile, fileExists, readFile } = host;
  host.getSourceFile = (fileName, language, ...rest) => {
    const text = files.get(fileName);
    return text === undefined
      ? getSourceFile.call(host, fileName, language, ...rest)
      : ts.createSourceFile(fileName, text, language);
  };
  host.fileExists = (fileName) => files.has(fileName) || fileExists.call(host, fileName);
  host.readFile = (fileName) => files.get(fileName) ?? readFile.call(host, fileName);
  const program = ts.createProgram({ rootNames: [...files.keys()], options, host });
  return [...files.keys()].flatMap((fileName) => {
    const sourceFile = program.getSourceFile(fileName)!;
    return [
      ...program.getSyntacticDiagnostics(sourceFile),
      ...program.getSemanticDiagnostics(sourceFile),
    ].map((diagnostic) => ({
      file: fileName.slice(FIXTURE_DIR.length + 1),
      line: sourceFile.getLineAndCharacterOfPosition(diagnostic.start ?? 0).line + 1,
      message: ts.flattenDiagnosticMessageText(diagnostic.messageText, "\n"),
    }));
  });
}

const errorsIn = (file: string) => diagnostics.filter((diagnostic) => diagnostic.file === file);
const firstLine = (message: string) => message.split("\n")[0];

describe("compile errors that name the fix", () => {
  beforeAll(() => {
    diagnostics = compile();
  });

  it("a raw tRPC submit names the payload field that is wrong, or says the name is outside the contract", () => {
    const byLine = new Map(
      errorsIn("raw-submit.ts").map((diagnostic) => [diagnostic.line, diagnostic.message]),
    );
    expect([...byLine.keys()]).toEqual([24, 26]);
    expect(byLine.get(24)).toContain("The types of 'payload.approved' are incompatible between these types.");
    expect(byLine.get(24)).toContain("Type 'string' is not assignable to type 'boolean'.");
    expect(byLine.get(26)).toContain("but required in type 'PaiAnswerOutsideTheContract'.");
  });

  it("an unknown suspend point lists the tool's suspend point names", () => {
    expect(errorsIn("suspend-name.ts")).toEqual([
      {
        file: "suspend-name.ts",
        line: 14,
        message: `Argument of type '"aprove"' is not assignable to parameter of type '"approve" | "confirm"'.`,
      },
    ]);
  });

  it("thread.action with an unknown name reports only the name, with the valid names", () => {
    expect(errorsIn("thread-action.ts")).toEqual([
      {
        file: "thread-action.ts",
        line: 19,
        message: `Argument of type '"unknown.name"' is not assignable to parameter of type '"ask.approve" | "ask.note" | "pick.output"'.`,
      },
    ]);
  });

  it("a tool whose context the agent lacks names the field and mapContext on the first line", () => {
    const byLine = new Map(errorsIn("tool-context.ts").map((diagnostic) => [diagnostic.line, diagnostic]));
    expect([...byLine.keys()]).toEqual([13, 17, 20, 27]);
    expect(firstLine(byLine.get(13)!.message)).toContain(
      `"PAI: tool 'deploy' needs context field 'orgId', which the runtimeContext lacks. Add it there, or register the tool as { tool, mapContext }."`,
    );
    expect(firstLine(byLine.get(17)!.message)).toContain(
      `"PAI: tool 'deploy' needs context field 'orgId' with another type than the runtimeContext gives. Fix it there, or register the tool as { tool, mapContext }."`,
    );
    // A child tool's context comes from its parent's.
    expect(firstLine(byLine.get(27)!.message)).toContain(
      `"PAI: tool 'deploy' needs context field 'orgId', which the parent tool's context lacks. Add it there, or register the tool as { tool, mapContext }."`,
    );
  });

  it("an agent without runtimeContext cannot register a tool that needs context", () => {
    const [error] = errorsIn("tool-context.ts").filter((diagnostic) => diagnostic.line === 20);
    expect(firstLine(error!.message)).toContain(
      `"PAI: tool 'deploy' needs context field 'orgId', but the agent has no runtimeContext. Add one that returns it, or register the tool as { tool, mapContext }."`,
    );
  });
});
