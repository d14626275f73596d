import { createPaiClient, type PaiTransport } from "@pai/client";
import { createPaiReact, type ToolRenderState } from "@pai/react";
import { describe, expectTypeOf, it } from "vitest";
import { z } from "zod";
import type { Agents } from "./fixtures.js";

const Pai = createPaiReact<Agents>();

describe("Pai.agent typing", () => {
  it("the provider takes a client typed by any agent", () => {
    const typed = createPaiClient<Agents["main"]>({ transport: {} as PaiTransport });
    expectTypeOf(<Pai.Provider client={typed} />).not.toBeAny();
  });

  it("accepts only registered agent names", () => {
    Pai.agent("main");
    // @ts-expect-error not a registered agent
    Pai.agent("other");
  });

  it("server-declared client tools: name literals and contract-typed execute", () => {
    const Main = Pai.agent("main");
    Main.useClientTool("getSelectedText", {
      execute: async (input, { action }) => {
        expectTypeOf(input).toEqualTypeOf<Record<string, never>>();
        expectTypeOf(action.name).toEqualTypeOf<"getSelectedText.output">();
        return { text: "x" };
      },
    });
    // @ts-expect-error the output must match the tool's output schema
    Main.useClientTool("getSelectedText", { execute: async () => ({ text: 1 }) });
    // @ts-expect-error deploy has a backend execute, so it is not a client tool
    Main.useClientTool("deploy", { execute: async () => ({ url: "x" }) });
    // @ts-expect-error unknown tool name
    Main.useClientTool("nope", { execute: async () => ({}) });
  });

  it("frontend-defined config tools infer input and output from inline Zod schemas", () => {
    const Main = Pai.agent("main", {
      clientTools: {
        getSelectedText: { execute: async () => ({ text: "from config" }) },
        "client.getTime": {
          description: "Local time",
          inputSchema: z.object({ zone: z.string() }),
          outputSchema: z.object({ time: z.string() }),
          execute: async (input) => {
            expectTypeOf(input).toEqualTypeOf<{ zone: string }>();
            return { time: "12:00" };
          },
        },
      },
    });
    Main.useToolRenderer("client.getTime", (props) => {
      if (props.state === "done") expectTypeOf(props.output).toEqualTypeOf<{ time: string }>();
      if (props.state === "waiting") {
        expectTypeOf(props.action.name).toEqualTypeOf<"client.getTime.output">();
        expectTypeOf(props.action.submit).parameter(0).toEqualTypeOf<{ time: string }>();
      }
      return null;
    });
    Main.useClientTool("client.getTime", { execute: async ({ zone }) => ({ time: zone }) });

    Pai.agent("main", {
      clientTools: {
        "client.bad": {
          description: "Wrong output",
          inputSchema: z.object({ a: z.string() }),
          outputSchema: z.object({ b: z.number() }),
          // @ts-expect-error returns a string where the output schema wants a number
          execute: async (input) => ({ b: input.a }),
        },
      },
    });
    Pai.agent("main", {
      clientTools: {
        // @ts-expect-error a frontend-defined tool needs a description
        "client.noDescription": { inputSchema: z.object({}) },
      },
    });
  });

  it("the object form of useClientTool infers from its schemas", () => {
    const Main = Pai.agent("main");
    Main.useClientTool(
      {
        name: "client.pickColor",
        description: "Pick a color",
        inputSchema: z.object({ palette: z.enum(["warm", "cold"]) }),
        outputSchema: z.object({ color: z.string() }),
      },
      {
        execute: async (input, { action }) => {
          expectTypeOf(input).toEqualTypeOf<{ palette: "warm" | "cold" }>();
          expectTypeOf(action.name).toEqualTypeOf<"client.pickColor.output">();
          return { color: "red" };
        },
        render: ({ state, output }) => (state === "done" ? output.color : null),
      },
    );
    // @ts-expect-error output must be a string
    Main.useClientTool(
      { name: "client.pickColor", description: "Pick", inputSchema: z.object({}), outputSchema: z.string() },
      { execute: async () => 1 },
    );
  });

  it("renderers are narrowed by state: typed data, suspension actions and output", () => {
    const Main = Pai.agent("main");
    Main.useToolRenderer("deploy", (props) => {
      expectTypeOf(props.state).toEqualTypeOf<ToolRenderState>();
      expectTypeOf(props.data.progress.records[0]!.value).toEqualTypeOf<{ label: string; pct: number }>();
      if (props.state === "waiting") {
        expectTypeOf(props.action.name).toEqualTypeOf<"deploy.approval">();
        expectTypeOf(props.action.input).toEqualTypeOf<{ prompt: string }>();
        expectTypeOf(props.action.submit).parameter(0).toEqualTypeOf<{ approved: boolean }>();
        expectTypeOf(props.input).toEqualTypeOf<{ service: string }>();
      }
      if (props.state === "done") expectTypeOf(props.output).toEqualTypeOf<{ url: string }>();
      if (props.state === "running") expectTypeOf(props.action).toEqualTypeOf<null>();
      // @ts-expect-error no such data channel
      props.data.logs;
      return null;
    });
    // The spec's pattern: destructure, return early unless waiting, then use the action.
    Main.useToolRenderer("getSelectedText", ({ state, action }) => {
      if (state !== "waiting") return null;
      return <button type="button" onClick={() => void action.submit({ text: "x" })} />;
    });
    // @ts-expect-error unknown tool name
    Main.useToolRenderer("nope", () => null);
  });

  it("without declared agents every name is accepted and payloads are unknown", () => {
    const Open = createPaiReact();
    const Any = Open.agent("anything");
    Any.useToolRenderer("whatever", (props) => {
      expectTypeOf(props.input).toEqualTypeOf<unknown>();
      return null;
    });
    Any.useClientTool("someTool", { execute: async (input) => input });
  });
});
