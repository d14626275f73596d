import type { PaiClient, PaiTransport } from "@pai/client";
import type { ActionResult, ThreadRow, ThreadSnapshot, WatchEvent } from "@pai/core";
import type { inferRouterInputs, inferRouterOutputs } from "@trpc/server";
import { describe, expectTypeOf, it } from "vitest";
import type { HostRouter } from "./host-app.js";

type Outputs = inferRouterOutputs<HostRouter>;
type Inputs = inferRouterInputs<HostRouter>;

describe("types of the PAI procedures in a host router", () => {
  it("infers procedure outputs in the client", () => {
    expectTypeOf<Outputs["pai"]["threads"]["get"]>().toEqualTypeOf<ThreadSnapshot>();
    expectTypeOf<Outputs["pai"]["threads"]["create"]>().toEqualTypeOf<ThreadRow>();
    expectTypeOf<Outputs["pai"]["actions"]["submit"]>().toEqualTypeOf<ActionResult>();
    expectTypeOf<Outputs["pai"]["threads"]["list"]["nextCursor"]>().toEqualTypeOf<string | null>();
  });

  it("types procedure inputs from the Zod schemas", () => {
    expectTypeOf<Inputs["pai"]["threads"]["get"]>().toEqualTypeOf<{ threadId: string }>();
    expectTypeOf<Inputs["pai"]["actions"]["fail"]["error"]>().toEqualTypeOf<string | { message: string }>();
    expectTypeOf<Inputs["pai"]["threads"]["watch"]>().toHaveProperty("lastEventId");
    // @ts-expect-error a thread id is a string
    const wrong: Inputs["pai"]["threads"]["get"] = { threadId: 1 };
    void wrong;
  });

  it("keeps the transport surface of the router in sync with PaiTransport", () => {
    type SendInput = Parameters<PaiTransport["threads"]["send"]>[0];
    expectTypeOf<SendInput>().toExtend<Inputs["pai"]["threads"]["send"]>();
    type SubmitInput = Parameters<PaiTransport["actions"]["submit"]>[0];
    expectTypeOf<SubmitInput>().toExtend<Inputs["pai"]["actions"]["submit"]>();
    expectTypeOf<PaiClient["transport"]["threads"]["watch"]>().returns.toEqualTypeOf<
      AsyncIterable<WatchEvent>
    >();
  });
});
