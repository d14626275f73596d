import {
  type AgentContractOf,
  createPai,
  defineAgent,
  definePlugin,
  defineTool,
  scopeFromIdentity,
  type ToolInput,
  type ToolName,
  type ToolOutput,
  type WithPlugins,
} from "@pai/core";
import { memoryStorage } from "@pai/storage-memory";
import { describe, expectTypeOf, it } from "vitest";
import { z } from "zod";

const echo = defineTool({
  id: "test.echo",
  description: "Echo.",
  inputSchema: z.object({ text: z.string() }),
  outputSchema: z.object({ echoed: z.string() }),
  execute: ({ input }) => ({ echoed: input.text }),
});

const shout = defineTool({
  id: "test.shout",
  description: "Shout.",
  inputSchema: z.object({ words: z.array(z.string()) }),
  outputSchema: z.string(),
  execute: ({ input }) => input.words.join(" ").toUpperCase(),
});

const loud = definePlugin({ id: "test.loud", tools: { shout } });
const agent = defineAgent({ tools: { echo } });

describe("WithPlugins", () => {
  it("adds plugin tool contracts to the agent contract", () => {
    type Agent = WithPlugins<typeof agent, [typeof loud]>;
    expectTypeOf<ToolInput<Agent, "shout">>().toEqualTypeOf<{ words: string[] }>();
    expectTypeOf<ToolOutput<Agent, "shout">>().toEqualTypeOf<string>();
    expectTypeOf<ToolInput<Agent, "echo">>().toEqualTypeOf<{ text: string }>();
    expectTypeOf<keyof AgentContractOf<Agent>>().toEqualTypeOf<"echo" | "shout">();
  });

  it("types pai.agents from the plugins given to createPai", () => {
    const pai = createPai({
      scope: scopeFromIdentity,
      storage: memoryStorage(),
      agents: { main: agent },
      plugins: [loud],
    });
    expectTypeOf<ToolName<typeof pai.agents.main>>().toEqualTypeOf<"echo" | "shout">();
  });

  it("leaves the agent unchanged without plugins", () => {
    expectTypeOf<WithPlugins<typeof agent, []>>().toEqualTypeOf<typeof agent>();
  });
});
