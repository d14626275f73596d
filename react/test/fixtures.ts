import { createPaiClient, type PaiClient, serviceTransport } from "@pai/client";
import { createTestRuntime, type ScriptedStep, type TestRuntime } from "@pai/core/testing";
import { z } from "zod";

/*
 * Hand-built runtime shapes of the test agent, as `defineTool` / `defineAgent` return them
 * (the engine reads only these fields). Switch to the real helpers once @pai/core exports them.
 */

/** A server-declared client-routed tool: no backend execute. */
export const getSelectedText = {
  kind: "tool" as const,
  id: "test.getSelectedText",
  config: {
    description: "Read the user's current selection",
    inputSchema: z.object({}),
    outputSchema: z.object({ text: z.string() }),
  },
  capabilities: {},
};

/** A backend tool that writes progress, waits for approval, then finishes and updates its progress in place. */
export const deploy = {
  kind: "tool" as const,
  id: "test.deploy",
  config: {
    description: "Deploy a service after approval",
    inputSchema: z.object({ service: z.string() }),
    outputSchema: z.object({ url: z.string() }),
    dataSchemas: { progress: z.object({ label: z.string(), pct: z.number() }) },
    suspend: {
      approval: {
        suspendSchema: z.object({ prompt: z.string() }),
        resumeSchema: z.object({ approved: z.boolean() }),
      },
    },
  },
  capabilities: {},
  execute: async (ctx: any) => {
    if (ctx.entry.type === "initial") {
      await ctx.data.write("progress", { label: "Building", pct: 0.5 }, { id: "build" });
      return ctx.suspend("approval", { prompt: `Deploy ${ctx.input.service}?` });
    }
    if (!ctx.entry.resume.approved) return ctx.fail("The deployment was not approved.");
    await ctx.data.write("progress", { label: "Deployed", pct: 1 }, { id: "build" });
    return { url: `https://${ctx.input.service}.example.test` };
  },
};

export const agent = {
  kind: "agent" as const,
  name: "main",
  tools: { getSelectedText: { tool: getSelectedText }, deploy: { tool: deploy } },
};

/** The type-level contract `defineAgent` would infer for `agent`. */
export type MainContract = {
  getSelectedText: {
    name: "getSelectedText";
    hasExecute: false;
    input: Record<string, never>;
    output: { text: string };
    data: {};
    suspend: {};
  };
  deploy: {
    name: "deploy";
    hasExecute: true;
    input: { service: string };
    output: { url: string };
    data: { progress: { label: string; pct: number } };
    suspend: { approval: { input: { prompt: string }; resume: { approved: boolean } } };
  };
};

export type Harness = {
  runtime: TestRuntime<typeof agent>;
  client: PaiClient;
  threadId: string;
};

/** A real runtime (scripted model, memory storage) and a client talking to it in-process. */
export async function createHarness(script: ScriptedStep[]): Promise<Harness> {
  const runtime = await createTestRuntime({ agent, model: script });
  const client = createPaiClient({
    transport: serviceTransport({ service: runtime.pai.service, identity: runtime.identity }),
  });
  const threadId = await runtime.createThread();
  return { runtime, client, threadId };
}
