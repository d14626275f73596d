// @vitest-environment jsdom
// biome-ignore-all lint/correctness/noComponentHookFactories: each test declares its own components around a fresh binding.
import { isPaiToolPart } from "@pai/client";
import type { ClientToolErrorInfo, ToolRenderProps } from "@pai/react";
import { createPaiReact, ThreadProvider, ToolPart, useThread } from "@pai/react";
import { cleanup, fireEvent, render, screen, waitFor } from "@testing-library/react";
import { type ReactNode, StrictMode, useState } from "react";
import { afterEach, describe, expect, it, vi } from "vitest";
import { z } from "zod";
import { type Agents, createHarness, type Harness, type MainContract } from "./fixtures.js";

const WAIT = { timeout: 5_000 };
const harnesses: Harness[] = [];

async function harness(script: Parameters<typeof createHarness>[0]): Promise<Harness> {
  const created = await createHarness(script);
  harnesses.push(created);
  return created;
}

afterEach(async () => {
  cleanup();
  for (const created of harnesses.splice(0)) await created.runtime.close();
});

/** Every tool part of the thread through `ToolPart`, plus a button that sends "go". */
function Transcript({ fallback }: { fallback?: (props: { toolName: string; state: string }) => ReactNode }) {
  const thread = useThread();
  const [error, setError] = useState<string | null>(null);
  return (
    <div>
      {thread.messages.flatMap((message) =>
        message.parts
          .filter(isPaiToolPart)
          .map((part) => (
            <ToolPart key={part.toolCallId} message={message} part={part} fallback={fallback} />
          )),
      )}
      <button
        type="button"
        onClick={() => thread.send("go").catch((cause: Error) => setError(cause.message))}
      >
        send
      </button>
      {error ? <p>send failed: {error}</p> : null}
    </div>
  );
}

const selectionScript = [
  { toolCalls: [{ toolName: "getSelectedText", input: {}, toolCallId: "call-sel" }] },
  { text: "You selected something." },
];

describe("server-declared client tools", () => {
  it("a mounted useClientTool execute answers the waiting action automatically", async () => {
    const { runtime, client, threadId } = await harness(selectionScript);
    const Pai = createPaiReact<Agents>();
    const Main = Pai.agent("main");
    const execute = vi.fn(async () => ({ text: "hello from the browser" }));
    function Handler() {
      Main.useClientTool("getSelectedText", { execute });
      return null;
    }
    // StrictMode mounts effects twice; the action must still run exactly once.
    render(
      <StrictMode>
        <Pai.Provider client={client}>
          <ThreadProvider threadId={threadId}>
            <Handler />
            <Transcript />
          </ThreadProvider>
        </Pai.Provider>
      </StrictMode>,
    );
    fireEvent.click(screen.getByText("send"));
    await waitFor(async () => expect(await runtime.lastText(threadId)).toBe("You selected something."), WAIT);
    expect(execute).toHaveBeenCalledTimes(1);
    expect(execute.mock.calls[0]).toMatchObject([{}, { threadId, toolCallId: "call-sel" }]);
    expect((await runtime.toolParts(threadId))[0]).toMatchObject({
      type: "tool-getSelectedText",
      state: "output-available",
      output: { text: "hello from the browser" },
    });
    expect(await runtime.pending(threadId)).toEqual([]);
  });

  it("with no handler mounted the action stays pending and the renderer's action answers it", async () => {
    const { runtime, client, threadId } = await harness(selectionScript);
    const Pai = createPaiReact<Agents>();
    const Main = Pai.agent("main");
    function Renderer() {
      Main.useToolRenderer("getSelectedText", ({ state, action, output }) => (
        <div data-testid="selection" data-state={state}>
          {state === "waiting" ? (
            <button type="button" onClick={() => void action.submit({ text: "typed by hand" })}>
              answer {action.name}
            </button>
          ) : null}
          {state === "done" ? <span>output: {output.text}</span> : null}
        </div>
      ));
      return null;
    }
    render(
      <Pai.Provider client={client}>
        <ThreadProvider threadId={threadId}>
          <Renderer />
          <Transcript />
        </ThreadProvider>
      </Pai.Provider>,
    );
    fireEvent.click(screen.getByText("send"));
    const answer = await screen.findByText("answer getSelectedText.output", {}, WAIT);
    expect(screen.getByTestId("selection").dataset.state).toBe("waiting");
    expect((await runtime.pending(threadId)).map((action) => action.name)).toEqual([
      "getSelectedText.output",
    ]);
    fireEvent.click(answer);
    await screen.findByText("output: typed by hand", {}, WAIT);
    expect(screen.getByTestId("selection").dataset.state).toBe("done");
    await waitFor(async () => expect(await runtime.lastText(threadId)).toBe("You selected something."), WAIT);
  });

  it("unmounting removes the registration; a handler mounted later answers the waiting action once", async () => {
    const { runtime, client, threadId } = await harness(selectionScript);
    const Pai = createPaiReact<Agents>();
    const Main = Pai.agent("main");
    const execute = vi.fn(async () => ({ text: "late answer" }));
    function Handler() {
      Main.useClientTool("getSelectedText", { execute });
      return <span>handler mounted</span>;
    }
    function Toggle() {
      const [mounted, setMounted] = useState(true);
      return (
        <>
          {mounted ? <Handler /> : null}
          <button type="button" onClick={() => setMounted((value) => !value)}>
            toggle
          </button>
        </>
      );
    }
    render(
      <Pai.Provider client={client}>
        <ThreadProvider threadId={threadId}>
          <Toggle />
          <Transcript fallback={({ state }) => <span data-testid="fallback">{state}</span>} />
        </ThreadProvider>
      </Pai.Provider>,
    );
    fireEvent.click(screen.getByText("toggle"));
    expect(screen.queryByText("handler mounted")).toBeNull();
    fireEvent.click(screen.getByText("send"));
    await waitFor(() => expect(screen.getByTestId("fallback").textContent).toBe("waiting"), WAIT);
    await runtime.waitForIdle(threadId);
    expect((await runtime.pending(threadId)).map((action) => action.name)).toEqual([
      "getSelectedText.output",
    ]);
    expect(execute).not.toHaveBeenCalled();

    fireEvent.click(screen.getByText("toggle"));
    await waitFor(async () => expect(await runtime.lastText(threadId)).toBe("You selected something."), WAIT);
    await waitFor(() => expect(screen.getByTestId("fallback").textContent).toBe("done"), WAIT);
    expect(execute).toHaveBeenCalledTimes(1);
  });

  it("an execute that throws leaves the action pending for a manual answer and reports the error", async () => {
    const { runtime, client, threadId } = await harness(selectionScript);
    const Pai = createPaiReact<Agents>();
    const Main = Pai.agent("main");
    const errors: Array<{ message: string; info: ClientToolErrorInfo }> = [];
    const execute = vi.fn(async (): Promise<{ text: string }> => {
      throw new Error("no selection API here");
    });
    function Handler() {
      Main.useClientTool("getSelectedText", {
        execute,
        render: ({ state, action }) =>
          state === "waiting" ? (
            <button type="button" onClick={() => void action.submit({ text: "manual" })}>
              answer manually
            </button>
          ) : (
            <span>state {state}</span>
          ),
      });
      return null;
    }
    render(
      <Pai.Provider
        client={client}
        onClientToolError={(error, info) => errors.push({ message: (error as Error).message, info })}
      >
        <ThreadProvider threadId={threadId}>
          <Handler />
          <Transcript />
        </ThreadProvider>
      </Pai.Provider>,
    );
    fireEvent.click(screen.getByText("send"));
    const manual = await screen.findByText("answer manually", {}, WAIT);
    await waitFor(() => expect(errors).toHaveLength(1), WAIT);
    expect(errors[0]).toMatchObject({
      message: "no selection API here",
      info: { threadId, toolName: "getSelectedText", actionId: "call-sel", phase: "execute" },
    });
    expect((await runtime.pending(threadId)).map((action) => action.name)).toEqual([
      "getSelectedText.output",
    ]);
    fireEvent.click(manual);
    await screen.findByText("state done", {}, WAIT);
    // Never run twice in one client, even though the state changed many times since.
    expect(execute).toHaveBeenCalledTimes(1);
  });

  it("execute can fail the call explicitly through its action; nothing else is submitted", async () => {
    const { runtime, client, threadId } = await harness([
      selectionScript[0]!,
      { text: "Could not read the selection." },
    ]);
    const Pai = createPaiReact<Agents>();
    const Main = Pai.agent("main", {
      clientTools: {
        getSelectedText: {
          execute: async (_input, { action }) => {
            await action.fail("Selection is empty");
            return { text: "ignored" };
          },
        },
      },
    });
    function Chat() {
      Main.useThread();
      return <Transcript />;
    }
    render(
      <Pai.Provider client={client}>
        <ThreadProvider threadId={threadId}>
          <Chat />
        </ThreadProvider>
      </Pai.Provider>,
    );
    fireEvent.click(screen.getByText("send"));
    await waitFor(
      async () => expect(await runtime.lastText(threadId)).toBe("Could not read the selection."),
      WAIT,
    );
    expect((await runtime.toolParts(threadId))[0]).toMatchObject({
      state: "output-error",
      errorText: expect.stringContaining("Selection is empty"),
    });
  });

  it("only the client that observes the thread executes; a provider without it mounted does not", async () => {
    const { runtime, client, threadId } = await harness(selectionScript);
    const PaiA = createPaiReact<Agents>();
    const PaiB = createPaiReact<Agents>();
    const MainA = PaiA.agent("main");
    const MainB = PaiB.agent("main");
    const executeA = vi.fn(async () => ({ text: "from tab A" }));
    const executeB = vi.fn(async () => ({ text: "from tab B" }));
    function HandlerA() {
      MainA.useClientTool("getSelectedText", { execute: executeA });
      return null;
    }
    function HandlerB() {
      MainB.useClientTool("getSelectedText", { execute: executeB });
      return null;
    }
    // Two "tabs": separate clients over the same server; only tab A shows the thread.
    const otherClient = (await import("@pai/client")).createPaiClient({ transport: client.transport });
    render(
      <>
        <PaiA.Provider client={client}>
          <HandlerA />
          <ThreadProvider threadId={threadId}>
            <Transcript />
          </ThreadProvider>
        </PaiA.Provider>
        <PaiB.Provider client={otherClient}>
          <HandlerB />
        </PaiB.Provider>
      </>,
    );
    fireEvent.click(screen.getByText("send"));
    await waitFor(async () => expect(await runtime.lastText(threadId)).toBe("You selected something."), WAIT);
    expect(executeA).toHaveBeenCalledTimes(1);
    expect(executeB).not.toHaveBeenCalled();
  });
});

describe("frontend-defined client tools", () => {
  it("a tool from Pai.agent config is sent as a snapshot with the request and answered", async () => {
    const { runtime, client, threadId } = await harness([
      { toolCalls: [{ toolName: "client.getTime", input: { zone: "UTC" }, toolCallId: "call-time" }] },
      { text: "It is noon." },
    ]);
    const Pai = createPaiReact<Agents>();
    const Main = Pai.agent("main", {
      clientTools: {
        "client.getTime": {
          description: "Read the local time in a zone",
          inputSchema: z.object({ zone: z.string() }),
          outputSchema: z.object({ time: z.string() }),
          execute: async ({ zone }) => ({ time: `12:00 ${zone}` }),
        },
      },
    });
    function Chat() {
      Main.useToolRenderer("client.getTime", ({ state, output }) => (
        <span data-testid="time">{state === "done" ? output.time : state}</span>
      ));
      return <Transcript />;
    }
    render(
      <Pai.Provider client={client}>
        <ThreadProvider threadId={threadId}>
          <Chat />
        </ThreadProvider>
      </Pai.Provider>,
    );
    fireEvent.click(screen.getByText("send"));
    await waitFor(() => expect(screen.getByTestId("time").textContent).toBe("12:00 UTC"), WAIT);
    await waitFor(async () => expect(await runtime.lastText(threadId)).toBe("It is noon."), WAIT);
    const run = await runtime.lastRun(threadId);
    expect(run?.clientTools).toEqual([
      {
        name: "client.getTime",
        description: "Read the local time in a zone",
        inputSchema: expect.objectContaining({
          type: "object",
          properties: { zone: { type: "string" } },
          required: ["zone"],
        }),
        outputSchema: expect.objectContaining({ properties: { time: { type: "string" } } }),
      },
    ]);
    const model = runtime.model as unknown as { calls: Array<{ tools?: Array<{ name: string }> }> };
    expect(model.calls[0]?.tools?.map((tool) => tool.name)).toContain("client.getTime");
  });

  it("a tool defined by the object form of useClientTool is sent only while mounted", async () => {
    const { runtime, client, threadId } = await harness([
      { toolCalls: [{ toolName: "client.pickColor", input: { palette: "warm" }, toolCallId: "call-color" }] },
      { text: "Red it is." },
      { text: "No tools now." },
    ]);
    const Pai = createPaiReact<Agents>();
    const Main = Pai.agent("main");
    function ColorPicker() {
      Main.useClientTool(
        {
          name: "client.pickColor",
          description: "Ask the user for a color",
          inputSchema: z.object({ palette: z.enum(["warm", "cold"]) }),
          outputSchema: z.object({ color: z.string() }),
        },
        { execute: async ({ palette }) => ({ color: palette === "warm" ? "red" : "blue" }) },
      );
      return null;
    }
    function Toggle() {
      const [mounted, setMounted] = useState(true);
      return (
        <>
          {mounted ? <ColorPicker /> : null}
          <button type="button" onClick={() => setMounted(false)}>
            unmount picker
          </button>
        </>
      );
    }
    render(
      <Pai.Provider client={client}>
        <ThreadProvider threadId={threadId}>
          <Toggle />
          <Transcript />
        </ThreadProvider>
      </Pai.Provider>,
    );
    fireEvent.click(screen.getByText("send"));
    await waitFor(async () => expect(await runtime.lastText(threadId)).toBe("Red it is."), WAIT);
    expect((await runtime.toolParts(threadId))[0]).toMatchObject({
      type: "dynamic-tool",
      toolName: "client.pickColor",
      output: { color: "red" },
    });
    expect((await runtime.lastRun(threadId))?.clientTools.map((tool) => tool.name)).toEqual([
      "client.pickColor",
    ]);

    fireEvent.click(screen.getByText("unmount picker"));
    fireEvent.click(screen.getByText("send"));
    await waitFor(async () => expect(await runtime.lastText(threadId)).toBe("No tools now."), WAIT);
    expect((await runtime.lastRun(threadId))?.clientTools).toEqual([]);
  });
});

describe("tool renderers", () => {
  it("receive progress data by channel and derived states: waiting on a suspension, then done", async () => {
    const { runtime, client, threadId } = await harness([
      { toolCalls: [{ toolName: "deploy", input: { service: "api" }, toolCallId: "call-deploy" }] },
      { text: "Deployed." },
    ]);
    const Pai = createPaiReact<Agents>();
    const Main = Pai.agent("main");
    const seen: Array<Pick<ToolRenderProps<MainContract["deploy"], "deploy">, "state">> = [];
    function DeployRenderer() {
      Main.useToolRenderer("deploy", (props) => {
        seen.push({ state: props.state });
        const progress = props.data.progress.records;
        return (
          <div data-testid="deploy" data-state={props.state}>
            {progress.map((record) => (
              <span key={record.id}>
                {record.id}: {record.value.label} {Math.round(record.value.pct * 100)}%
              </span>
            ))}
            {props.state === "waiting" ? (
              <button type="button" onClick={() => void props.action.submit({ approved: true })}>
                {props.action.input.prompt}
              </button>
            ) : null}
            {props.state === "done" ? <a href={props.output.url}>open</a> : null}
          </div>
        );
      });
      return null;
    }
    render(
      <Pai.Provider client={client}>
        <ThreadProvider threadId={threadId}>
          <DeployRenderer />
          <Transcript />
        </ThreadProvider>
      </Pai.Provider>,
    );
    fireEvent.click(screen.getByText("send"));
    const approve = await screen.findByText("Deploy api?", {}, WAIT);
    expect(screen.getByTestId("deploy").dataset.state).toBe("waiting");
    expect(screen.getByText("build: Building 50%")).toBeTruthy();
    fireEvent.click(approve);
    await screen.findByText("open", {}, WAIT);
    expect(screen.getByTestId("deploy").dataset.state).toBe("done");
    // The same data id was updated in place, not appended.
    expect(screen.getByText("build: Deployed 100%")).toBeTruthy();
    expect(screen.queryByText("build: Building 50%")).toBeNull();
    expect(screen.getByText("open").getAttribute("href")).toBe("https://api.example.test");
    expect(seen.map((entry) => entry.state)).toContain("waiting");
    await waitFor(async () => expect(await runtime.lastText(threadId)).toBe("Deployed."), WAIT);
  });

  it("a cancelled wait renders as cancelled", async () => {
    const { runtime, client, threadId } = await harness([
      { toolCalls: [{ toolName: "deploy", input: { service: "web" }, toolCallId: "call-deploy" }] },
      { text: "Stopped." },
    ]);
    const Pai = createPaiReact<Agents>();
    const Main = Pai.agent("main");
    function DeployRenderer() {
      Main.useToolRenderer("deploy", ({ state, action }) => (
        <div data-testid="deploy" data-state={state}>
          {state === "waiting" ? (
            <button type="button" onClick={() => void action.cancel({ reason: "not today" })}>
              cancel
            </button>
          ) : null}
        </div>
      ));
      return null;
    }
    render(
      <Pai.Provider client={client}>
        <ThreadProvider threadId={threadId}>
          <DeployRenderer />
          <Transcript />
        </ThreadProvider>
      </Pai.Provider>,
    );
    fireEvent.click(screen.getByText("send"));
    fireEvent.click(await screen.findByText("cancel", {}, WAIT));
    await waitFor(() => expect(screen.getByTestId("deploy").dataset.state).toBe("cancelled"), WAIT);
    await runtime.waitForIdle(threadId);
  });
});

describe("a binding's useThread()", () => {
  it("answers a typed pending action through action(name), with the session's client-tool snapshot", async () => {
    const { runtime, client, threadId } = await harness([
      { toolCalls: [{ toolName: "deploy", input: { service: "api" }, toolCallId: "call-deploy" }] },
      { text: "Deployed." },
    ]);
    const Pai = createPaiReact<Agents>();
    const Main = Pai.agent("main", {
      clientTools: {
        "client.getTime": {
          description: "Local time",
          inputSchema: z.object({}),
          outputSchema: z.object({ time: z.string() }),
          execute: async () => ({ time: "12:00" }),
        },
      },
    });
    function Approvals() {
      const thread = Main.useThread();
      const approval = thread.action("deploy.approval");
      return (
        <div>
          {thread.pending.map((action) =>
            action.name === "deploy.approval" ? <p key={action.ref.actionId}>{action.input.prompt}</p> : null,
          )}
          {approval ? (
            <button type="button" onClick={() => void approval.submit({ approved: true })}>
              approve
            </button>
          ) : null}
          {thread.messages.flatMap((message) =>
            message.parts.map((part) =>
              part.type === "tool-deploy" && part.state === "output-available" ? (
                <a key={part.toolCallId} href={part.output.url}>
                  {part.input.service}
                </a>
              ) : null,
            ),
          )}
          <button type="button" onClick={() => void thread.send("go", { clientTools: [] })}>
            send
          </button>
        </div>
      );
    }
    render(
      <Pai.Provider client={client}>
        <ThreadProvider threadId={threadId}>
          <Approvals />
        </ThreadProvider>
      </Pai.Provider>,
    );
    fireEvent.click(screen.getByText("send"));
    expect(await screen.findByText("Deploy api?", {}, WAIT)).toBeTruthy();
    fireEvent.click(screen.getByText("approve"));
    const link = await screen.findByText("api", {}, WAIT);
    expect(link.getAttribute("href")).toBe("https://api.example.test");
    await waitFor(async () => expect(await runtime.lastText(threadId)).toBe("Deployed."), WAIT);
    expect(screen.queryByText("approve")).toBeNull();
    // The message went out without client tools; the submit carried the binding's frontend-defined tool.
    expect((await runtime.lastRun(threadId))?.clientTools?.map((tool) => tool.name)).toEqual([
      "client.getTime",
    ]);
  });
});
