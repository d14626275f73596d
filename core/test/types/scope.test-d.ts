import { createAgentRuntime, createPai, defineAgent, type PaiService, scopeFromIdentity } from "@pai/core";
import { memoryStorage } from "@pai/storage-memory";
import { describe, expectTypeOf, it } from "vitest";

const agent = defineAgent({ tools: {} });
type User = { id: string; orgId: string };

describe("scope is required unless the identity carries scopeKey (no shared default tenant)", () => {
  it("refuses a runtime without scope when the identity type has no scopeKey", () => {
    // @ts-expect-error scope is required: an unregistered identity has no scopeKey.
    createPai({ agents: { main: agent }, storage: memoryStorage() });
    // @ts-expect-error the same rule for createAgentRuntime.
    createAgentRuntime({ agent, storage: memoryStorage() });
  });

  it("infers the identity type from scope and types the service by it", () => {
    const pai = createPai({
      agents: { main: agent },
      storage: memoryStorage(),
      scope: (user: User) => ({ scopeKey: user.orgId, userKey: user.id }),
    });
    expectTypeOf(pai.service).toExtend<PaiService<User>>();
    expectTypeOf<Parameters<typeof pai.service.threads.list>[0]["identity"]>().toEqualTypeOf<User>();
    void pai.service.threads.list({ identity: { id: "u1", orgId: "o1" } });
    // @ts-expect-error an identity of another shape does not reach the service.
    void pai.service.threads.list({ identity: { scopeKey: "o1" } });
  });

  it("lets a single-tenant app say so explicitly", () => {
    const runtime = createAgentRuntime({
      agent,
      storage: memoryStorage(),
      scope: () => ({ scopeKey: "app" }),
    });
    void runtime.service.threads.list({ identity: null });
  });

  it("accepts an identity that carries its own scopeKey through scopeFromIdentity", () => {
    const pai = createPai({ agents: { main: agent }, storage: memoryStorage(), scope: scopeFromIdentity });
    void pai.service.threads.list({ identity: { scopeKey: "acme", userKey: "ann" } });
    // @ts-expect-error an identity without scopeKey is not one.
    void pai.service.threads.list({ identity: { userKey: "ann" } });
  });

  it("does not take a client-chosen thread id on the public create", () => {
    const pai = createPai({ agents: { main: agent }, storage: memoryStorage(), scope: scopeFromIdentity });
    // @ts-expect-error ids are the server's choice (pai.trusted.createThread takes one).
    void pai.service.threads.create({ identity: { scopeKey: "acme" }, threadId: "t1" });
    void pai.trusted.createThread({ scope: { scopeKey: "acme" }, threadId: "t1" });
  });
});
