import { createPai, defineAgent, scopeFromIdentity } from "@pai/core";
import { memoryStorage } from "@pai/storage-memory";
import { initTRPC } from "@trpc/server";
import { describe, it } from "vitest";
import { createPaiRouter } from "../src/index.js";

type User = { id: string; orgId: string };
const t = initTRPC.context<{ user: User }>().create();
const agent = defineAgent({ tools: {} });

describe("createPaiRouter and scope", () => {
  it("compiles when the runtime's scope reads the identity the router passes", () => {
    const pai = createPai({
      agents: { main: agent },
      storage: memoryStorage(),
      scope: (user: User) => ({ scopeKey: user.orgId, userKey: user.id }),
    });
    t.router({
      pai: createPaiRouter({ procedure: t.procedure, service: pai.service, identity: (ctx) => ctx.user }),
    });
  });

  it("fails to compile when the runtime has no scope and the identity has no scopeKey", () => {
    // @ts-expect-error the runtime itself needs scope for a scope-less identity.
    createPai({ agents: { main: agent }, storage: memoryStorage() });
    // A runtime that reads scopeKey from the identity cannot be mounted with a scope-less one.
    const pai = createPai({ agents: { main: agent }, storage: memoryStorage(), scope: scopeFromIdentity });
    // @ts-expect-error ctx.user has no scopeKey, so it cannot be the service's identity.
    createPaiRouter({ procedure: t.procedure, service: pai.service, identity: (ctx) => ctx.user });
  });

  it("fails to compile when the router passes another identity than scope reads", () => {
    const pai = createPai({
      agents: { main: agent },
      storage: memoryStorage(),
      scope: (identity: { tenant: string }) => ({ scopeKey: identity.tenant }),
    });
    // @ts-expect-error ctx.user is not { tenant }.
    createPaiRouter({ procedure: t.procedure, service: pai.service, identity: (ctx) => ctx.user });
  });
});
