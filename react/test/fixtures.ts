import { createPaiClient, type PaiClient, serviceTransport } from "@pai/client";
import { defineAgent, defineTool } from "@pai/core";
import { createTestRuntime, type ScriptedStep, type TestRuntime } from "@pai/core/testing";
import type { ContractOf } from "@pai/react";
import { memoryStorage } from "@pai/storage-memory";
import { z } from "zod";

/** A server-declared client-routed tool: no backend execute. */
export const getSelectedText = defineTool({
  id: "test.getSelectedText",
  description: "Read the user's current selection",
  inputSchema: z.object({}),
  outputSchema: z.object({ text: z.string() }),
});

/** A backend tool that writes progress, waits for approval, then finishes and updates its progress in place. */
export const deploy = defineTool({
  id: "test.deploy",
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
  execute: async (ctx) => {
    if (ctx.entry.type === "initial") {
      await ctx.data.write("progress", { label: "Building", pct: 0.5 }, { id: "build" });
      return ctx.suspend("approval", { prompt: `Deploy ${ctx.input.service}?` });
    }
    if (!ctx.entry.resume.approved) return ctx.fail("The deployment was not approved.");
    await ctx.data.write("progress", { label: "Deployed", pct: 1 }, { id: "build" });
    return { url: `https://${ctx.input.service}.example.test` };
  },
});

export const agent = defineAgent({ name: "main", tools: { getSelectedText, deploy } });

/** The agents the typed bindings know, as an app would declare them. */
export type Agents = { main: typeof agent };

/** The contract of the test agent, for type assertions. */
export type MainContract = ContractOf<typeof agent>;

export type Harness = {
  runtime: TestRuntime<typeof agent>;
  client: PaiClient;
  threadId: string;
};

/** A real runtime (scripted model, memory storage) and a client talking to it in-process. */
export async function createHarness(script: ScriptedStep[]): Promise<Harness> {
  const runtime = await createTestRuntime({ agent, model: script, storage: memoryStorage() });
  const client = createPaiClient({
    transport: serviceTransport({ service: runtime.pai.service, identity: runtime.identity }),
  });
  const threadId = await runtime.createThread();
  return { runtime, client, threadId };
}
