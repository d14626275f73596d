// The worked example of core/README.md, kept runnable so the README cannot drift from the API.
import { createAgentRuntime, defineAgent, defineCapability, defineTool, scopeFromIdentity } from "@pai/core";
import { memoryStorage } from "@pai/storage-memory";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { createTestRuntime } from "../support/test-runtime.js";

type Ledger = { balance(account: string): Promise<number>; close(): Promise<void> };

const ledger = defineCapability<Ledger>()({ id: "acme.ledger" });

const balance = defineTool({
  id: "acme.account-balance.v1",
  description: "Read the balance of one account, in cents.",
  inputSchema: z.object({ account: z.string() }),
  outputSchema: z.object({ cents: z.number().int() }),
  capabilities: { books: ledger },
  execute: async ({ input, capabilities }) => ({ cents: await capabilities.books.balance(input.account) }),
});

const totalBalance = defineTool({
  id: "acme.total-balance.v1",
  description: "Add up the balances of several accounts, in cents.",
  inputSchema: z.object({ accounts: z.array(z.string()).min(1) }),
  outputSchema: z.object({ cents: z.number().int() }),
  tools: { balance },
  execute: async ({ input, tools }) => {
    const results = await Promise.all(input.accounts.map((account) => tools.balance.execute({ account })));
    return { cents: results.reduce((sum, result) => sum + result.cents, 0) };
  },
});

const agent = defineAgent({ name: "bookkeeper", tools: { totalBalance } });

function createRuntime(openLedger: (resourceKey: string) => Promise<Ledger>) {
  return createAgentRuntime({
    scope: scopeFromIdentity,
    agent,
    storage: memoryStorage(),
    capabilities: {
      "acme.ledger": {
        acquire: ({ resourceKey }) => openLedger(resourceKey),
        release: (facade) => facade.close(),
        idleTimeoutMs: 60_000,
      },
    },
  });
}

describe("core/README.md worked example", () => {
  it("the parent sums its child calls, the ledger is opened once per thread and closed with the runtime", async () => {
    const opened: string[] = [];
    let closed = 0;
    const t = await createTestRuntime({
      agent,
      capabilities: {
        "acme.ledger": {
          acquire: ({ resourceKey }) => {
            opened.push(resourceKey);
            return {
              balance: async (account: string) => account.length * 100,
              close: async () => void closed++,
            };
          },
          release: (facade: Ledger) => facade.close(),
        },
      },
      model: [
        { toolCalls: [{ toolName: "totalBalance", input: { accounts: ["cash", "bank"] } }] },
        { text: "You have 8.00 in total." },
      ],
    });
    const threadId = await t.createThread();
    await t.send(threadId, "How much money do I have?");

    const parts = await t.toolParts(threadId);
    expect(parts).toHaveLength(1);
    expect(parts[0]).toMatchObject({ type: "tool-totalBalance", output: { cents: 800 } });
    expect(opened).toHaveLength(1);
    expect(closed).toBe(1);
    expect(await t.lastText(threadId)).toBe("You have 8.00 in total.");
  });

  it("createRuntime with the README's binding shape builds, and a missing binding does not", async () => {
    const pai = createRuntime(async () => ({ balance: async () => 0, close: async () => undefined }));
    await pai.close();
    expect(() => createAgentRuntime({ scope: scopeFromIdentity, agent, storage: memoryStorage() })).toThrow(
      /totalBalance/,
    );
  });
});
